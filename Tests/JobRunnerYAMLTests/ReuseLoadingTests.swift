import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerYAML

/// Anchors, aliases, merge keys and `x-` keys (SPEC 3.1), and the cap on what aliases may add.
@Suite struct ReuseLoadingTests {
    func load(_ text: String) -> JobFileLoader.Result {
        JobFileLoader.load(texts: [("jobs.yaml", text)], environment: [:])
    }

    @Test func mergeKeysAndXKeysShareSettings() throws {
        let result = load(
            """
            x-common: &common
              timeout: 5m
              retry: { attempts: 3 }
              env: { MODE: ci }
            x-extra: &extra
              priority: 7
              timeout: 9m
            jobs:
              build:
                <<: *common
                run: make
              test:
                <<: [*extra, *common]
                x-notes: anything at all
                run: make test
                env: { MODE: test }
            """)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let build = try #require(result.workload?.job("build"))
        #expect(build.timeout == .seconds(300))
        #expect(build.retry.attempts == 3)
        #expect(build.environment == ["MODE": "ci"])
        let test = try #require(result.workload?.job("test"))
        #expect(test.timeout == .seconds(540), "an earlier map of the list wins")
        #expect(test.priority == 7)
        #expect(test.environment == ["MODE": "test"], "the job's own keys win over merged ones")
    }

    @Test func aliasesWorkInWithAndNeeds() throws {
        let result = load(
            """
            x-users: &users [alice, bob]
            jobs:
              a:
                run: "true"
              b:
                run: "true"
                needs: &needs [a]
                with: { users: *users }
              c:
                run: "true"
                needs: *needs
            """)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        #expect(result.workload?.job("b")?.parameters["users"] == .array([.string("alice"), .string("bob")]))
        #expect(result.workload?.job("c")?.needs == ["a"])
    }

    @Test func anErrorInAMergedMapPointsAtItsText() {
        let result = load(
            """
            x-common: &common
              timeout: soon
            jobs:
              a:
                <<: *common
                run: "true"
            """)
        let messages = result.diagnostics.map(\.description)
        #expect(
            messages == [
                "jobs.yaml:2:12: error: timeout: 'soon' is not a duration; write it like 30s, 15m, 1h30m, 500ms or 1d"
            ])
    }

    @Test func anUnknownKeyInAMapMergedByTwoJobsIsReportedOnceAtTheAnchor() {
        let result = load(
            "x-c: &c\n  colour: red\njobs:\n  a:\n    <<: *c\n    run: x\n  b:\n    <<: *c\n    run: y\n")
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:2:3: error: unknown key 'colour' in a map merged with <<"
            ])
    }

    /// 60 jobs merge one anchor with an unknown key: listed once, it leaves room in the list
    /// of a file's first 50 problems for the others.
    @Test func aProblemOfAnAnchorMergedBySixtyJobsTakesOnePlaceInTheList() {
        var text = "x-c: &c\n  colour: red\njobs:\n"
        for index in 0..<60 { text += "  j\(index): { <<: *c, run: x }\n" }
        text += "  last: { run: x, priority: high }\n"
        #expect(
            load(text).diagnostics.map(\.description) == [
                "jobs.yaml:2:3: error: unknown key 'colour' in a map merged with <<",
                "jobs.yaml:64:29: error: priority must be a whole number, not 'high'",
            ])
    }

    @Test func aMergeOfSomethingElseThanAMapIsLocated() {
        let result = load("jobs:\n  a:\n    <<: [1]\n    run: \"true\"\n")
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:3:10: error: each item merged with << into job 'a' must be a map, usually an alias like *common"
            ])
    }

    @Test func unknownKeysStillFailOutsideX() {
        let result = load("common: 1\njobs:\n  a:\n    run: \"true\"\n")
        #expect(
            result.diagnostics.map(\.description).first?.hasPrefix(
                "jobs.yaml:1:1: error: unknown key 'common'") == true)
    }

    static let laughs = (1...8).map { level in
        let previous = Character(UnicodeScalar(UInt8(ascii: "a") + UInt8(level - 1)))
        let name = Character(UnicodeScalar(UInt8(ascii: "a") + UInt8(level)))
        return "\(name): &\(name) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ",") + "]"
    }

    /// 9 levels of anchors, each the last repeated 9 times: a billion strings, at the top level.
    static let topLevelBomb =
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
        + laughs.joined(separator: "\n") + "\n"

    /// The same inside a job's `with:`.
    static let withBomb =
        "jobs:\n  j:\n    run: \"true\"\n    with:\n      a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
        + laughs.map { "      " + $0 }.joined(separator: "\n") + "\n"

    @Test func aBillionLaughsAtTheTopLevelIsRefusedWithALocatedError() {
        let result = load(Self.topLevelBomb)
        let messages = result.diagnostics.map(\.description)
        #expect(messages.count == 1, "\(messages)")
        #expect(
            messages.first?.hasPrefix(
                "jobs.yaml:6:8: error: YAML aliases here make this file stand for more than 100000 values")
                == true, "\(messages)")
        #expect(result.workload == nil)
    }

    @Test func aBillionLaughsInsideWithIsRefusedWithALocatedError() {
        let result = load(Self.withBomb)
        let messages = result.diagnostics.map(\.description)
        #expect(messages.count == 1, "\(messages)")
        #expect(messages.first?.hasPrefix("jobs.yaml:10:14: error: YAML aliases here") == true, "\(messages)")
    }

    @Test func aBillionLaughsUsedAsAMapKeyIsRefusedBeforeItIsHashed() {
        let result = load(Self.topLevelBomb + "z: { ? *i : 1, ? *h : 2 }\n")
        #expect(
            result.diagnostics.map(\.description).first?.hasPrefix("jobs.yaml:6:8: error: YAML aliases here")
                == true)
    }

    @Test func aliasesUnderTheLimitLoad() throws {
        // 100 jobs that each merge a map of 10 keys: 1,000 values added by aliases.
        var text =
            "x-common: &common\n  env: {A: '1', B: '2', C: '3', D: '4', E: '5'}\n  timeout: 1m\njobs:\n"
        for index in 0..<100 { text += "  job\(index): { <<: *common, run: 'true' }\n" }
        let result = load(text)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        #expect(result.workload?.jobs.count == 100)
    }

    @Test func deepNestingIsRefused() {
        for alias in ["", "x-a: &a [1]\nx-b: *a\n"] {
            let text =
                alias + "jobs:\n  a:\n    run: 'true'\n    with: { x: " + String(repeating: "[", count: 1200)
                + String(repeating: "]", count: 1200) + " }\n"
            let messages = load(text).diagnostics.map(\.message)
            #expect(
                messages == ["values are nested more than 1000 levels deep; flatten this file"], "\(messages)"
            )
        }
    }
}
