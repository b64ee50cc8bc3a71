import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerYAML

/// Job files written to hurt: ids that are paths, floods of errors, control characters,
/// values that span lines, parameters that hide each other (issue 11, items 5, 8 and 12).
@Suite struct HostileInputTests {
    private func load(_ text: String) -> JobFileLoader.Result {
        JobFileLoader.load(texts: [("jobs.yaml", text)])
    }

    // MARK: Ids that name directories

    @Test func idsAndNamesThatAreDotOrDotDotAreLocatedErrors() {
        let result = load(
            """
            pipelines:
              ..: {}
            constraints:
              .: { check: "true", satisfy: "true" }
            jobs:
              ..:
                run: echo up
              .:
                run: echo here

            """)
        #expect(result.workload == nil)
        let places = result.diagnostics.map { "\($0.location.line):\($0.location.column)" }
        #expect(places == ["2:3", "4:3", "6:3", "8:3"], "\(result.diagnostics)")
        #expect(result.diagnostics[0].message.hasPrefix("pipeline name '..' is not allowed"))
        #expect(result.diagnostics[1].message.hasPrefix("constraint name '.' is not allowed"))
        #expect(result.diagnostics[2].message.hasPrefix("job id '..' is not allowed"))
        #expect(result.diagnostics[3].message.contains("'.' and '..' name directories"))
    }

    @Test func otherIdsWithDotsStayValid() {
        let result = load("jobs:\n  .hidden:\n    run: x\n  a..b:\n    run: x\n  ...:\n    run: x\n")
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        #expect(result.workload?.jobs.map(\.id) == [".hidden", "a..b", "..."])
    }

    @Test func logPathsNeverLeaveTheRunDirectory() {
        for id in [".", "..", "a/../../b", "", "50%"] {
            let path = LogLayout.attemptLog(in: "/s/logs", runID: "r1", jobID: id, attempt: 1)
            let components = path.split(separator: "/", omittingEmptySubsequences: false)
            #expect(components.count == 6, "\(path)")
            #expect(!components.contains(".") && !components.contains(".."), "\(path)")
        }
        #expect(
            LogLayout.attemptLog(in: "/s/logs", runID: "r1", jobID: "build", attempt: 2)
                == "/s/logs/r1/build/2.log")
    }

    // MARK: A flood of errors

    @Test func errorsOfOneFileAreCappedWithACountOfTheRest() {
        var text = "jobs:\n"
        for index in 0..<10_000 { text += "  j\(index): { run: x, colour: red }\n" }
        let result = load(text)
        #expect(result.workload == nil)
        #expect(result.diagnostics.count == DiagnosticList.perFile + 1)
        let last = result.diagnostics[result.diagnostics.count - 1]
        #expect(last.message.hasPrefix("… and 9,950 more errors in jobs.yaml"), "\(last)")
        #expect(last.location.line == 52, "the first error not listed is that of j50, on line 52")
        #expect(result.diagnostics.dropLast().allSatisfy { $0.message.hasPrefix("unknown key 'colour'") })
    }

    @Test func errorsOfChecksAcrossFilesAreCappedToo() {
        var text = "jobs:\n"
        for index in 0..<500 { text += "  j\(index): { run: x, needs: [nobody] }\n" }
        let result = JobFileLoader.load(texts: [
            ("a.yaml", text), ("b.yaml", "jobs:\n  ok: { run: x, nedes: 1 }\n"),
        ])
        let inA = result.diagnostics.filter { $0.location.file == "a.yaml" }
        #expect(inA.count == DiagnosticList.perFile + 1)
        #expect(inA.last?.message.hasPrefix("… and 450 more errors in a.yaml") == true)
        #expect(result.diagnostics.filter { $0.location.file == "b.yaml" }.count == 1)
    }

    @Test func theCapKeepsTheFirstProblemsByPlace() {
        var list = DiagnosticList()
        for line in (1...120).reversed() {
            list.append(Diagnostic(at: SourceLocation(file: "f", line: line, column: 1), "e\(line)"))
        }
        let all = list.all
        #expect(all.prefix(50).map(\.location.line) == Array(1...50))
        #expect(all.last?.location.line == 51)
        #expect(all.last?.message.hasPrefix("… and 70 more errors in f") == true)
        #expect(DiagnosticList.grouped(1_234_567) == "1,234,567")
    }

    // MARK: Control characters and line breaks

    @Test func aNULIsReportedAtItsLineAndColumnAndNeverEchoed() {
        let result = load("jobs:\n  a:\n    run: echo\u{0}hi\n")
        #expect(result.diagnostics.count == 1)
        let diagnostic = result.diagnostics[0]
        #expect(diagnostic.location.line == 3 && diagnostic.location.column == 14, "\(diagnostic)")
        #expect(diagnostic.description.contains("\\0"))
        #expect(!diagnostic.description.unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test func anEscapeAfterWideCharactersAndCRLFIsLocated() {
        let result = load("jobs:\r\n  a:\r\n    run: \"é€\"\u{1B}[2J\r\n")
        #expect(result.diagnostics.count == 1)
        let diagnostic = result.diagnostics[0]
        #expect(diagnostic.location.line == 3 && diagnostic.location.column == 14, "\(diagnostic)")
        #expect(diagnostic.description.contains("\\x1B"))
        #expect(!diagnostic.description.unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test func valuesThatSpanLinesStayOnTheLineOfTheirLocation() {
        let result = load(
            "jobs:\n  a:\n    run: x\n    timeout: \"1\\n2\\r\\n\\e]0;T\\a\"\n    priority: |\n      one\n      two\n"
        )
        #expect(result.diagnostics.count == 2, "\(result.diagnostics)")
        for diagnostic in result.diagnostics {
            let text = diagnostic.description
            #expect(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(text)")
            #expect(text.hasPrefix("jobs.yaml:\(diagnostic.location.line):"))
        }
        #expect(result.diagnostics[0].description.contains("'1\\n2\\r\\n\\x1B]0;T\\x07'"))
        #expect(result.diagnostics[1].description.contains("'one\\ntwo\\n'"))
    }

    @Test func aHugeValueIsShortenedInMessages() {
        let huge = String(repeating: "x", count: 100_000)
        let result = load("jobs:\n  a:\n    run: x\n    priority: \(huge)\n")
        #expect(result.diagnostics.count == 1)
        #expect(result.diagnostics[0].message.count < 200)
        #expect(result.diagnostics[0].message.contains("…"))
    }

    @Test func visibleTextEscapesEveryControlCharacter() {
        #expect(VisibleText.escaped("plain — text") == "plain — text")
        #expect(VisibleText.escaped("\u{1B}]0;TITLE\u{7}\u{1B}[2J") == "\\x1B]0;TITLE\\x07\\x1B[2J")
        #expect(VisibleText.escaped("a\tb\r\nc\u{0}\u{7F}\u{9B}") == "a\\tb\\r\\nc\\0\\x7F\\u{9B}")
        // A C1 control alone, and a character that shares its first UTF-8 byte (0xC2) but is none.
        #expect(VisibleText.escaped("next\u{85}line") == "next\\u{85}line")
        #expect(VisibleText.escaped("£ 3") == "£ 3")
    }

    // MARK: Parameters that hide each other

    @Test func withKeysThatGiveOneVariableAreALocatedErrorNamingBoth() {
        let result = load("jobs:\n  a:\n    run: env\n    with:\n      a-b: 1\n      A.b: 3\n      a_b: 2\n")
        #expect(result.workload == nil)
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:6:7: error: with: keys 'a-b' and 'A.b' both become the variable JOBRUNNER_PARAM_A_B of this shell job; rename one of them",
                "jobs.yaml:7:7: error: with: keys 'a-b' and 'a_b' both become the variable JOBRUNNER_PARAM_A_B of this shell job; rename one of them",
            ])
    }

    @Test func pluginJobsGetTheirParametersAsJSONSoSuchKeysMayMeet() {
        let result = load("jobs:\n  a:\n    plugin: files.copy\n    with: { a-b: 1, a_b: 2 }\n")
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
    }
}
