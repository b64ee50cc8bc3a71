import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerYAML

/// Inputs whose cost grew faster than their size (issue 26, items 12-15): aliases of one long
/// string, defaults nested thousands deep, thousands of `env:` keys and unknown needs. How long
/// each takes is measured by `make bench` (`--only inputs`); these tests hold what the loader
/// answers for them.
@Suite struct CostlyInputTests {
    private func load(_ text: String, environment: [String: String] = [:]) -> JobFileLoader.Result {
        JobFileLoader.load(texts: [("jobs.yaml", text)], environment: environment)
    }

    // MARK: Aliases count bytes, not only values

    @Test func aliasesOfALongStringAreRefusedByTheBytesTheyStandFor() {
        // 40 aliases of a 1 MB string: few values, 40 MB of text once written out.
        let long = String(repeating: "y", count: 1 << 20)
        let aliases = Array(repeating: "*a", count: 40).joined(separator: ", ")
        let result = load(
            "x-a: &a '\(long)'\njobs:\n  a:\n    run: 'true'\n    env: {E: '1'}\n    x-w: [\(aliases)]\n")
        #expect(result.workload == nil)
        let message = result.diagnostics.first?.message ?? ""
        #expect(message.contains("MiB of text"), "\(result.diagnostics)")
        #expect(message.contains("*a stands for 1048576 bytes"), "\(message)")
    }

    @Test func aliasesOfShortValuesStayWithinTheByteBudget() {
        let aliases = Array(repeating: "*e", count: 500).joined(separator: ", ")
        let result = load("x-e: &e 'short'\njobs:\n  a:\n    run: 'true'\n    x-w: [\(aliases)]\n")
        #expect(!result.diagnostics.contains { $0.message.contains("aliases") }, "\(result.diagnostics)")
    }

    // MARK: Nested defaults

    @Test func defaultsNestedDeeperThanTheLimitAreRefusedWithASentence() {
        let depth = Interpolation.nestingLimit + 1
        let value =
            String(repeating: "${UNSET_A:-", count: depth) + "x" + String(repeating: "}", count: depth)
        let failure = Interpolation(environment: [:]).expand(value)
        guard case .failure(let why) = failure else {
            Issue.record("expanded: \(failure)")
            return
        }
        #expect(why.message.hasPrefix("defaults nest more than \(Interpolation.nestingLimit) deep"))
    }

    @Test func nestedDefaultsWithinTheLimitExpandAndASetVariableEndsTheDescent() throws {
        let depth = Interpolation.nestingLimit
        let inner =
            String(repeating: "${UNSET_A:-", count: depth - 1) + "x"
            + String(repeating: "}", count: depth - 1)
        #expect(try Interpolation(environment: [:]).expand("${UNSET_B:-\(inner)}").get() == "x")
        // Set, the outermost name wins however deep its default goes.
        let deep = String(repeating: "${A:-", count: 5_000) + "x" + String(repeating: "}", count: 5_000)
        #expect(try Interpolation(environment: ["A": "set"]).expand(deep).get() == "set")
    }

    @Test func bracesAndEscapesAroundReferencesKeepTheirMeaning() throws {
        let interpolation = Interpolation(environment: ["A": "1", "E": ""])
        #expect(try interpolation.expand("$${x} ${A}").get() == "${x} 1")
        #expect(try interpolation.expand("${E:-a{b}c").get() == "a{bc")
        #expect(try interpolation.expand("${E:-$${}}").get() == "${}")
        #expect(try interpolation.expand("} ${A} {").get() == "} 1 {")
        #expect(try interpolation.expand("ü${A}é$").get() == "ü1é$")
        #expect(throws: Interpolation.Failure.self) { try interpolation.expand("${A:-${E}").get() }
    }

    // MARK: env: keys

    @Test func aJobThatSetsADefaultsVariableAgainKeepsItsOwnValueOnce() throws {
        var text = "defaults:\n  env:\n"
        for index in 0..<2_000 { text += "    K\(index): d\(index)\n" }
        text += "jobs:\n  a:\n    run: 'true'\n    env:\n"
        for index in stride(from: 0, to: 2_000, by: 2) { text += "      K\(index): own\(index)\n" }
        let result = load(text)
        let job = try #require(result.workload?.jobs.first, "\(result.diagnostics)")
        #expect(job.environment.count == 2_000)
        #expect(job.environment["K0"] == "own0")
        #expect(job.environment["K1"] == "d1")
        #expect(job.environment["K1998"] == "own1998")
    }

    @Test func anEnvNameWithAnEqualsSignIsALocatedError() {
        let result = load("jobs:\n  a:\n    run: 'true'\n    env:\n      A=B: x\n")
        #expect(result.workload == nil)
        #expect(result.diagnostics.map(\.location.line) == [5], "\(result.diagnostics)")
        #expect(result.diagnostics.first?.message.contains("'A=B' cannot be passed to a process") == true)
    }

    // MARK: Unknown needs

    @Test func unknownNeedsBeyondTheListedOnesAreCountedAndTheListedOnesKeepTheirHint() {
        var text = "jobs:\n"
        for index in 0..<300 { text += "  job-\(index):\n    run: 'true'\n    needs: [jbo-\(index)]\n" }
        let result = load(text)
        #expect(result.workload == nil)
        let listed = result.diagnostics.filter { $0.message.contains("which no loaded file defines") }
        #expect(listed.count == 50)
        #expect(listed.allSatisfy { $0.message.contains("did you mean 'job-") }, "\(listed.prefix(2))")
        #expect(
            result.diagnostics.last?.message.contains("250 more errors") == true,
            "\(result.diagnostics.last as Any)")
    }
}
