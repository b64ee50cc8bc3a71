import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerYAML

/// `validate` lists every problem, each at its own place (SPEC 3, Validation): every cycle,
/// every repeat of a key, a syntax error where it can be fixed, values cut short, each file once.
@Suite struct EveryProblemTests {
    private func messages(_ text: String, file: String = "jobs.yaml") -> [String] {
        JobFileLoader.load(texts: [(file, text)], environment: [:]).diagnostics.map(\.description)
    }

    // MARK: Cycles

    @Test func everyCycleIsReportedOnceAtItsFirstJob() {
        #expect(
            messages(
                """
                jobs: {b: {run: "true", needs: [c]}, c: {run: "true", needs: [b]}, \
                d: {run: "true", needs: [e]}, e: {run: "true", needs: [d]}}
                """) == [
                    "jobs.yaml:1:8: error: dependency cycle: b -> c -> b",
                    "jobs.yaml:1:68: error: dependency cycle: d -> e -> d",
                ])
        #expect(
            messages(
                "jobs:\n  a: { run: x, needs: [a] }\n  b: { run: x, needs: [c] }\n  c: { run: x, needs: [b] }\n"
            )
                == [
                    "jobs.yaml:2:3: error: dependency cycle: a -> a",
                    "jobs.yaml:3:3: error: dependency cycle: b -> c -> b",
                ])
    }

    @Test func aCycleStartsAtTheFirstJobOfItsGroupAndIsTheShortestWayBack() {
        // a, b and c need each other two ways: one group, one cycle, the shortest from c.
        #expect(
            messages(
                "jobs:\n  c: { run: x, needs: [a] }\n  a: { run: x, needs: [b, c] }\n  b: { run: x, needs: [a] }\n"
            )
                == ["jobs.yaml:2:3: error: dependency cycle: c -> a -> c"])
        #expect(
            messages(
                "jobs:\n  a: { run: x, needs: [b] }\n  b: { run: x, needs: [c] }\n  c: { run: x, needs: [a] }\n  d: { run: x, needs: [a] }\n"
            ) == ["jobs.yaml:2:3: error: dependency cycle: a -> b -> c -> a"])
    }

    @Test func cyclesAmongManyJobsAreAllFoundWithoutDeepRecursion() {
        // 20,000 jobs in pairs that need each other, behind a chain 20,000 deep.
        var text = "jobs:\n"
        let pairs = 10_000
        for index in 0..<pairs {
            text +=
                "  p\(index): { run: x, needs: [q\(index)\(index + 1 < pairs ? ", p\(index + 1)" : "")] }\n"
            text += "  q\(index): { run: x, needs: [p\(index)] }\n"
        }
        let result = JobFileLoader.load(texts: [("jobs.yaml", text)], environment: [:])
        let cycles = result.diagnostics.filter { $0.message.hasPrefix("dependency cycle:") }
        // Only the first 50 problems of a file are listed, and one line counts the rest.
        #expect(cycles.count == DiagnosticList.perFile)
        #expect(cycles.first?.message == "dependency cycle: p0 -> q0 -> p0")
        #expect(result.diagnostics.last?.message.hasPrefix("… and 9,950 more errors") == true)
    }

    // MARK: Duplicate keys

    @Test func aRepeatedJobIdIsReportedAtBothPlacesEachNamingTheOther() {
        #expect(
            messages(
                "jobs:\n  a: { run: \"true\" }\n  b: { run: \"true\" }\n  a: { run: \"false\" }\n",
                file: "d.yaml")
                == [
                    "d.yaml:2:3: error: duplicate key 'a' in one map: each key (and each job id) may appear only once; it is repeated at d.yaml:4:3; rename or remove the repeat",
                    "d.yaml:4:3: error: duplicate key 'a' in one map: each key (and each job id) may appear only once; it is also defined at d.yaml:2:3; rename or remove the repeat",
                ])
    }

    @Test func theRepeatsOfEveryMapAreListed() {
        let found = messages(
            "jobs:\n  a:\n    run: x\n    env: { K: 1, K: 2 }\n  b: { run: y }\n  b: { run: z }\n")
        #expect(found.count == 4, "\(found)")
        #expect(
            found.contains {
                $0.hasPrefix("jobs.yaml:4:18: error: duplicate key 'K'") && $0.contains("jobs.yaml:4:12")
            })
        #expect(
            found.contains {
                $0.hasPrefix("jobs.yaml:6:3: error: duplicate key 'b'") && $0.contains("jobs.yaml:5:3")
            })
    }

    @Test func aMillionRepeatsAreCountedNotAllWrittenOut() {
        // Each repeat is two problems; past the first thousand kept they are only counted.
        let text = "jobs:\n" + String(repeating: "  a: { run: x }\n", count: 5_001)
        let result = JobFileLoader.load(texts: [("jobs.yaml", text)], environment: [:])
        #expect(result.diagnostics.count == DiagnosticList.perFile + 1)
        #expect(
            result.diagnostics.first?.description.hasPrefix("jobs.yaml:2:3: error: duplicate key 'a'") == true
        )
        #expect(result.diagnostics.last?.message.hasPrefix("… and 9,950 more errors in jobs.yaml") == true)
    }

    // MARK: Syntax

    @Test func anUnclosedQuoteIsReportedWhereTheStringStarts() {
        let text = "jobs:\n  a:\n    run: \"echo a\n  b:\n    run: x\n  c:\n    run: y\n"
        #expect(
            messages(text, file: "q.yaml") == [
                "q.yaml:3:10: error: invalid YAML: a quoted string starting here is never closed; end it with the quote it starts with"
            ])
        #expect(
            messages("jobs: { a: { run: 'echo } }\n", file: "q.yaml") == [
                "q.yaml:1:19: error: invalid YAML: a quoted string starting here is never closed; end it with the quote it starts with"
            ])
    }

    // MARK: Long values

    @Test func longValuesAreCutToSixtyCharactersInEveryMessage() {
        let long = String(repeating: "x", count: 129)
        let cut = "'" + String(repeating: "x", count: 60) + "…'"
        let found = messages(
            "jobs:\n  \(long): { run: x }\n  b: { run: x, needs: [\(long)y], timeout: \(long) }\n")
        #expect(found.count == 3)
        for message in found {
            #expect(message.contains(cut), "\(message)")
            #expect(!message.contains(String(repeating: "x", count: 61)), "\(message)")
        }
        #expect(
            VisibleText.quoted(String(repeating: "é", count: 60)) == "'" + String(repeating: "é", count: 60)
                + "'")
    }

    // MARK: Empty sections

    @Test func sectionsWrittenWithNothingAfterThemAreEmpty() {
        for section in [
            "jobs", "pipelines", "constraints", "defaults", "plugins", "retention", "connectivity",
        ] {
            let result = JobFileLoader.load(texts: [("jobs.yaml", "\(section):\n")], environment: [:])
            #expect(result.diagnostics.isEmpty, "\(section): \(result.diagnostics.map(\.description))")
            #expect(result.workload?.jobs.isEmpty == true)
        }
        #expect(messages("jobs:\npipelines:\nx-a: 1\n").isEmpty)
        #expect(
            messages("jobs: []\n") == [
                "jobs.yaml:1:7: error: jobs must be a map of keys to values, not a list"
            ])
    }
}

/// Each job file is loaded once, however many ways it is named.
@Suite struct NamedTwiceTests {
    @Test func aFileNamedTwiceIsLoadedOnce() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("named-twice-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/jobs/sub", withIntermediateDirectories: true)
        try "jobs:\n  a1:\n    run: x\n".write(
            toFile: root + "/jobs/a.yaml", atomically: true, encoding: .utf8)
        try "jobs:\n  b1:\n    run: x\n".write(
            toFile: root + "/jobs/sub/b.yaml", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            atPath: root + "/link.yaml", withDestinationPath: root + "/jobs/a.yaml")
        let result = JobFileLoader.load(
            paths: [
                root + "/jobs", root + "/jobs/a.yaml", root + "/jobs/sub/../a.yaml", root + "/link.yaml",
                root + "/jobs/sub", root + "/jobs//sub/b.yaml",
            ], environment: [:])
        #expect(result.diagnostics.map(\.description) == [])
        #expect(result.files == [root + "/jobs/a.yaml", root + "/jobs/sub/b.yaml"])
        #expect(result.workload?.jobs.map(\.id) == ["a1", "b1"])
    }
}
