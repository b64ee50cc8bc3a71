import Foundation
import JobRunnerCore
import JobRunnerTesting
import Logging
import Testing

/// Attempts that a handler starts without a task (``JobHandler/start(_:ended:)``, what
/// in-process plugin calls use): their ends and a stop reach them as a task's would.
struct StartedAttemptTests {
    /// Starts every attempt on a thread of its own; holds the jobs named in `hold` until
    /// stopped. Never expects `run`.
    final class ThreadHandler: JobHandler {
        private struct State {
            var started: [String] = []
            var ranInATask: [String] = []
            var stops: [String: AttemptStop] = [:]
        }
        private let state = Locked(State())
        let hold: Set<String>
        let results: [String: AttemptResult]

        init(hold: Set<String> = [], results: [String: AttemptResult] = [:]) {
            self.hold = hold
            self.results = results
        }

        var started: [String] { state.withLock { $0.started } }
        var ranInATask: [String] { state.withLock { $0.ranInATask } }

        func run(_ request: AttemptRequest) async -> AttemptResult {
            state.withLock { $0.ranInATask.append(request.job.id) }
            return .succeeded
        }

        func start(_ request: AttemptRequest, ended: @escaping @Sendable (AttemptResult) -> Void)
            -> AttemptStop?
        {
            let id = request.job.id
            state.withLock { $0.started.append(id) }
            if hold.contains(id) {
                // Ends only when stopped, once, whoever asks.
                let once = Locked(false)
                return AttemptStop {
                    guard
                        once.withLock({ done in
                            defer { done = true }
                            return !done
                        })
                    else { return }
                    ended(AttemptResult(.interrupted(.runnerStopped)))
                }
            }
            let result = results[id] ?? .succeeded
            if id.hasPrefix("sync") {
                ended(result)  // before `start` returns
            } else {
                Thread.detachNewThread { ended(result) }
            }
            return AttemptStop {}
        }
    }

    func runner(
        _ jobs: [JobDefinition], handler: ThreadHandler, store: any QueueStore, observer: RecordingObserver
    )
        -> Runner
    {
        Runner(
            workload: Workload(jobs: jobs, pipelines: []), store: store, handler: handler,
            clock: ManualClock(),
            observer: observer,
            options: RunnerOptions(logDirectory: "/tmp/jobrunner-tests", runnerPID: 1),
            logger: Logger(label: "test"), randomSeed: 7)
    }

    @Test func endsFromOtherThreadsAndFromWithinStartReachTheScheduler() async throws {
        let handler = ThreadHandler(results: [
            "sync-fails": AttemptResult(.pluginFailed("no")),
            "b": AttemptResult(.succeeded, outputs: ["k": "v"]),
        ])
        let store = InMemoryQueueStore()
        let observer = RecordingObserver()
        let jobs = [job("a"), job("b", needs: ["a"]), job("sync-ok", needs: ["b"]), job("sync-fails")]
        let summary = try await runner(jobs, handler: handler, store: store, observer: observer).run()
        #expect(summary.state == .failed)
        #expect(summary.counts[.succeeded] == 3)
        #expect(summary.counts[.failed] == 1)
        #expect(handler.ranInATask.isEmpty)
        #expect(Set(handler.started) == ["a", "b", "sync-ok", "sync-fails"])
        let snapshot = try #require(try await store.currentSnapshot())
        #expect(snapshot.outputs["b"] == ["k": "v"])
        #expect(snapshot.attempts["sync-fails"]?.first?.reason == "no")
    }

    @Test func aStopEndsAStartedAttemptAsInterruptedAndTheRunWaitsForItsEnd() async throws {
        let handler = ThreadHandler(hold: ["slow"])
        let store = InMemoryQueueStore()
        let observer = RecordingObserver()
        let runner = runner(
            [job("slow"), job("after", needs: ["slow"])], handler: handler, store: store, observer: observer)
        let task = Task { try await runner.run() }
        await observer.waitFor(.started, job: "slow")
        runner.requestStop(signal: SIGTERM)
        let summary = try await task.value
        #expect(summary.state == .stopped)
        let snapshot = try #require(try await store.currentSnapshot())
        #expect(snapshot.jobs["slow"]?.state == .waiting)
        #expect(snapshot.jobs["slow"]?.reason == .waiting(.interrupted))
        #expect(snapshot.attempts["slow"]?.first?.outcome == .interrupted)
        #expect(snapshot.attempts["slow"]?.first?.reason == "the runner stopped")
        #expect(handler.started == ["slow"])
    }
}
