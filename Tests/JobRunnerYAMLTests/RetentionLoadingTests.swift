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
}
