import Foundation
import JobRunnerCore
import JobRunnerYAML
import Testing

@Suite struct RetentionLoadingTests {
    func load(_ text: String) -> JobFileLoader.Result {
        JobFileLoader.load(texts: [("jobs.yaml", text)])
    }

    @Test func readsRetention() throws {
        let result = load("retention: { runs: 5, age: 2d }\njobs:\n  a:\n    run: \"true\"\n")
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let retention = try #require(result.workload?.retention)
        #expect(retention == RetentionPolicy(runs: 5, age: .seconds(2 * 86_400)))
    }

    @Test func defaultsWhenAbsent() throws {
        let result = load("jobs:\n  a:\n    run: \"true\"\n")
        #expect(result.workload?.retention == RetentionPolicy())
    }

    @Test func badValuesAreLocated() {
        let result = load("retention:\n  runs: 0\n  age: soon\n  keep: 3\njobs:\n  a:\n    run: \"true\"\n")
        let messages = result.diagnostics.map(\.description)
        #expect(
            messages.contains { $0.hasPrefix("jobs.yaml:2:9: error:") && $0.contains("retention.runs") },
            "\(messages)")
        #expect(
            messages.contains { $0.hasPrefix("jobs.yaml:3:8: error:") && $0.contains("retention.age") },
            "\(messages)")
        #expect(messages.contains { $0.hasPrefix("jobs.yaml:4:3: error: unknown key 'keep'") }, "\(messages)")
    }

    @Test func aPeriodicJobMayKeepItsOwnNumberOfOccurrences() throws {
        let result = load(
            "jobs:\n  tick:\n    every: 5s\n    run: \"true\"\n    retention: { runs: 3 }\n  daily:\n    cron: \"@daily\"\n    run: \"true\"\n"
        )
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        #expect(result.workload?.job("tick")?.retention == RetentionPolicy(runs: 3))
        #expect(result.workload?.job("daily")?.retention == nil, "the top-level retention, counted apart")
    }

    @Test func aJobsRetentionIsCheckedWhereItStands() {
        let result = load(
            "jobs:\n  build:\n    run: \"true\"\n    retention: { runs: 3 }\n  tick:\n    every: 5s\n    run: \"true\"\n    retention:\n      runs: 0\n      kep: 2\n"
        )
        let messages = result.diagnostics.map(\.description)
        #expect(
            messages.contains {
                $0.hasPrefix("jobs.yaml:4:5: error: retention on a job applies to periodic jobs")
            }, "\(messages)")
        #expect(
            messages.contains { $0.hasPrefix("jobs.yaml:9:13: error:") && $0.contains("retention.runs") },
            "\(messages)")
        #expect(messages.contains { $0.hasPrefix("jobs.yaml:10:7: error: unknown key 'kep'") }, "\(messages)")
    }
}
