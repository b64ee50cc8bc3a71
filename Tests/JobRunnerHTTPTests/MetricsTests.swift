import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerHTTP

/// `/metrics`' families with a label set per job: counted by the runner's events, written in
/// Prometheus' text format after the registry's families, escaped as the format wants.
@Suite struct MetricsTests {
    static func scrape(_ metrics: DashboardMetrics) async -> String {
        let reader = ReadModel(
            store: InMemoryQueueStore(), lock: nil, logs: LogLocation(stateDirectory: "/nowhere"))
        return String(decoding: await metrics.scrape(reader), as: UTF8.self)
    }

    @Test func attemptsAreCountedByJobPipelineAndOutcome() async {
        let metrics = DashboardMetrics()
        metrics.setPipelines(["build": "ci", "test": "ci"])
        let observer = metrics.observer
        let start = Date(timeIntervalSince1970: 1_000)
        func event(_ job: String, _ kind: RunEvent.Kind, after seconds: Double) {
            observer.record(RunEvent(time: start + seconds, run: "r", job: job, kind: kind))
        }
        event("build", .started, after: 0)
        event("build", .succeeded, after: 2)
        event("test", .started, after: 2)
        event("test", .retrying, after: 3)
        event("test", .started, after: 4)
        event("test", .failed, after: 5)
        // An end with no start seen (the dashboard came up after it started) counts nothing.
        event("lint", .failed, after: 5)
        let text = await Self.scrape(metrics)
        #expect(
            text.contains("# HELP jobrunner_attempts_total Attempts ended, by job, pipeline and outcome\n"))
        #expect(text.contains("# TYPE jobrunner_attempts_total counter\n"), "\(text)")
        #expect(
            text.contains("jobrunner_attempts_total{job=\"build\",pipeline=\"ci\",outcome=\"succeeded\"} 1\n")
        )
        #expect(
            text.contains("jobrunner_attempts_total{job=\"test\",pipeline=\"ci\",outcome=\"retrying\"} 1\n"))
        #expect(
            text.contains("jobrunner_attempts_total{job=\"test\",pipeline=\"ci\",outcome=\"failed\"} 1\n"))
        #expect(!text.contains("job=\"lint\""), "\(text)")
        #expect(text.contains("jobrunner_attempts_running{pipeline=\"ci\"} 0.0\n"), "\(text)")
        #expect(text.contains("jobrunner_attempt_duration_seconds_count{pipeline=\"ci\"} 3\n"), "\(text)")
        // Every family once: its samples follow its own # TYPE line.
        #expect(text.components(separatedBy: "# TYPE jobrunner_attempts_total ").count == 2)
    }

    /// `jobrunner_pipeline_suspended` had series only for pipelines once suspended; `web`
    /// showed `jobrunner_store_commit_seconds` zeros though it commits nothing it times.
    @Test func everyKnownPipelineHasASuspendedSeriesAndWebHasNoCommitLatency() async throws {
        let store = InMemoryQueueStore()
        let reader = ReadModel(store: store, lock: nil, logs: LogLocation(stateDirectory: "/nowhere"))
        _ = try await store.updatePipeline("deploy") { $0.suspended = 2 }
        let metrics = DashboardMetrics()
        metrics.setPipelines(["build": "ci", "ship": "deploy"])
        let text = String(decoding: await metrics.scrape(reader), as: UTF8.self)
        #expect(text.contains("jobrunner_pipeline_suspended{pipeline=\"ci\"} 0"), "\(text)")
        #expect(text.contains("jobrunner_pipeline_suspended{pipeline=\"deploy\"} 2"), "\(text)")
        #expect(text.contains("jobrunner_store_commit_seconds"))
        let web = String(
            decoding: await DashboardMetrics(timesCommits: false).scrape(reader), as: UTF8.self)
        #expect(!web.contains("jobrunner_store_commit_seconds"), "\(web)")
        #expect(web.contains("jobrunner_pipeline_suspended{pipeline=\"deploy\"} 2"), "\(web)")
    }

    @Test func manyJobsAreCountedEachOnce() async {
        let metrics = DashboardMetrics()
        let observer = metrics.observer
        let now = Date(timeIntervalSince1970: 0)
        for round in 0..<2 {
            for job in 0..<5_000 {
                observer.record(RunEvent(time: now, run: "r\(round)", job: "j\(job)", kind: .started))
                observer.record(RunEvent(time: now, run: "r\(round)", job: "j\(job)", kind: .succeeded))
            }
        }
        let text = await Self.scrape(metrics)
        let samples = text.split(separator: "\n").filter { $0.hasPrefix("jobrunner_attempts_total{") }
        #expect(samples.count == 5_000)
        #expect(samples.allSatisfy { $0.hasSuffix("outcome=\"succeeded\"} 2") }, "\(samples.prefix(3))")
    }

    @Test func labelValuesAndHelpAreEscaped() {
        var counters = LabeledCounters(name: "jobrunner_x_total", help: "a \\ b\nc", labelNames: ["a", "b"])
        #expect(counters.count(["q\"uote", "back\\slash\nline"]) == 0)
        counters.increment(["q\"uote", "back\\slash\nline"], by: 3)
        counters.increment(["plain", "p"])
        counters.increment(["q\"uote", "back\\slash\nline"])
        var buffer: [UInt8] = []
        counters.emit(into: &buffer)
        #expect(
            String(decoding: buffer, as: UTF8.self) == """
                # HELP jobrunner_x_total a \\\\ b\\nc
                # TYPE jobrunner_x_total counter
                jobrunner_x_total{a="q\\"uote",b="back\\\\slash\\nline"} 4
                jobrunner_x_total{a="plain",b="p"} 1

                """)
        var empty: [UInt8] = []
        LabeledCounters(name: "jobrunner_y_total", help: "y", labelNames: ["a"]).emit(into: &empty)
        #expect(empty.isEmpty, "no family without a sample, as the registry")
    }
}
