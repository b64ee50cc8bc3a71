import Foundation
import JobRunnerCore
import JobRunnerTesting
import Logging

/// A shell-free job for runner tests.
func job(
    _ id: String, needs: [String] = [], pipeline: String = "default", priority: Int = 0,
    retry: RetryPolicy = RetryPolicy(),
    file: Int = 0, enabled: Bool = true
) -> JobDefinition {
    JobDefinition(
        id: id, handler: .shell("true"), pipeline: pipeline, needs: needs, priority: priority, retry: retry,
        enabled: enabled, fileIndex: file)
}

/// A runner wired to test doubles.
struct Harness {
    let store: any QueueStore
    let handler: ScriptedHandler
    let clock = ManualClock()
    let observer = RecordingObserver()

    init(store: any QueueStore = InMemoryQueueStore(), handler: ScriptedHandler = ScriptedHandler()) {
        self.store = store
        self.handler = handler
    }

    func runner(
        _ jobs: [JobDefinition], pipelines: [PipelineDefinition] = [], maxRunning: Int? = nil,
        startNew: Bool = false, pacing: CommitPacing.Policy = .adaptive
    ) -> Runner {
        Runner(
            workload: Workload(jobs: jobs, pipelines: pipelines), store: store, handler: handler,
            clock: clock,
            observer: observer,
            options: RunnerOptions(
                maxRunning: maxRunning, startNewRun: startNew, logDirectory: "/tmp/jobrunner-tests",
                runnerPID: 1, commitPacing: pacing),
            logger: Logger(label: "test"), randomSeed: 7)
    }

    func run(
        _ jobs: [JobDefinition], pipelines: [PipelineDefinition] = [], maxRunning: Int? = nil,
        startNew: Bool = false
    ) async throws -> RunSummary {
        try await runner(jobs, pipelines: pipelines, maxRunning: maxRunning, startNew: startNew).run()
    }
}
