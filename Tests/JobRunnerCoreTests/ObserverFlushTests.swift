import Foundation
import JobRunnerCore
import JobRunnerTesting
import Logging
import Testing

/// Observers may keep what they record and write it on `flush()`: the runner flushes once per
/// batch of messages, so lines appear while the run goes on, and once more before it returns.
@Suite struct ObserverFlushTests {
    @Test(.timeLimit(.minutes(5))) func whatABatchReportedIsFlushedBeforeTheRunWaitsAndAtTheEnd() async throws
    {
        let observer = FlushWatcher()
        let handler = ScriptedHandler(hold: ["hold"])
        let runner = Runner(
            workload: Workload(jobs: [job("hold"), job("after", needs: ["hold"])], pipelines: []),
            store: InMemoryQueueStore(), handler: handler, clock: ManualClock(), observer: observer,
            options: RunnerOptions(logDirectory: "/tmp/jobrunner-tests", runnerPID: 1),
            logger: Logger(label: "test"), randomSeed: 7)
        let run = Task { try await runner.run() }
        // `hold` runs until released: its start is flushed while the run waits for its end.
        await observer.waitForFlushed("started hold")
        handler.release("hold")
        let summary = try await run.value
        #expect(summary.state == .succeeded)
        let (recorded, flushed) = observer.logs
        #expect(flushed == recorded, "every line flushed, in the order recorded")
        #expect(flushed.contains("succeeded after"))
    }
}

/// Records events as lines, and which of them a flush has written out so far.
final class FlushWatcher: RunObserver {
    private struct State {
        var recorded: [String] = []
        var flushed: [String] = []
        var watchers: [(line: String, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state = Locked(State())

    var logs: (recorded: [String], flushed: [String]) { state.withLock { ($0.recorded, $0.flushed) } }

    func record(_ event: RunEvent) {
        state.withLock { $0.recorded.append("\(event.kind.rawValue) \(event.job ?? "")") }
    }

    func flush() {
        let ready = state.withLock { state in
            state.flushed = state.recorded
            let flushed = Set(state.flushed)
            defer { state.watchers.removeAll { flushed.contains($0.line) } }
            return state.watchers.filter { flushed.contains($0.line) }.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns once a flush has written `line` out.
    func waitForFlushed(_ line: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.flushed.contains(line) { return true }
                state.watchers.append((line, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
