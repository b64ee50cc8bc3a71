import Foundation
import Glibc
import JobRunnerCore
import Synchronization

/// The stop signal (SIGINT, SIGTERM) a worker session got, 0 for none: set by a signal handler.
private let workerStopSignal = Atomic<Int32>(0)

/// A host that joins the runner of another host on a shared store (SPEC 8): it decides
/// nothing; it claims the attempts the deciding runner queues and runs them with its own
/// handlers, until the run it joined ends (`run`) or it is stopped (`serve`). When the deciding
/// runner is gone (its host died or was cut off) before the run ended, it says so, and the
/// session takes the store over and resumes the run itself.
struct HostWorkerSession {
    /// How a worker's time ended.
    enum Ending {
        /// The run it joined ended (`run`), or a signal stopped it.
        case finished(RunSummary)
        /// The deciding runner is gone and the run is not over: this host takes over.
        case runnerGone
    }

    let sharing: any AttemptSharing
    let reader: ReadModel
    let handler: any JobHandler
    let jobs: @Sendable (String) -> JobDefinition?
    let logDirectory: String
    let slots: Int
    let serve: Bool
    /// Where the one line this host prints goes.
    let progressFD: Int32

    func work(place: String) async throws -> Ending {
        let runner = await reader.lock?.runnerPID()
        writeText(
            STDERR_FILENO,
            "jobrunner: the runner\(runner.map { " (pid \($0))" } ?? "") of \(place) decides; this host runs its attempts\n"
        )
        // The run this host joins: the one running now, read before any attempt is claimed (a
        // host stopped right after its first claim must still know the run it worked for, and
        // end with it instead of taking the store over once it has ended).
        var joined: String?
        if let id = try? await reader.currentRunID(), let record = try? await reader.run(id),
            record.state == .running
        {
            joined = id
        }
        let worker = sharing.work(with: handler, jobs: jobs, logDirectory: logDirectory, slots: slots)
        // A plain handler, not a dispatch source: when this host takes over, the runner's own
        // signal handling (the service group's for `serve`) starts as in a fresh process; a
        // dispatch source cancelled here left SIGTERM ignored after a takeover.
        workerStopSignal.store(0, ordering: .relaxed)
        for number in [SIGINT, SIGTERM] {
            signal(number) { number in workerStopSignal.store(number, ordering: .relaxed) }
        }
        defer { for number in [SIGINT, SIGTERM] { signal(number, SIG_DFL) } }
        var ending: Ending?
        while ending == nil {
            try? await Task.sleep(for: .milliseconds(500))
            let stopSignal = workerStopSignal.load(ordering: .relaxed)
            if stopSignal != 0 {
                ending = .finished(summary(joined ?? "", state: .stopped, signal: stopSignal))
                break
            }
            var record: RunRecord?
            var id = joined
            if id == nil { id = try? await reader.currentRunID() }
            if let id { record = try? await reader.run(id) }
            if joined == nil, let record, record.state == .running { joined = record.id }
            if !serve, joined != nil, let record, record.state != .running {
                ending = .finished(summary(record.id, state: record.state, signal: nil))
            } else if await !(reader.lock?.runnerWorks() ?? true) {
                ending = .runnerGone
            }
        }
        await worker.stop()
        let count = worker.completed
        let ran = "this host ran \(count) attempt\(count == 1 ? "" : "s")"
        switch ending {
        case .finished(let summary):
            writeText(progressFD, "run \(summary.runID) \(summary.state.rawValue); \(ran)\n")
        case .runnerGone:
            writeText(
                STDERR_FILENO, "jobrunner: the deciding runner of \(place) is gone; \(ran), and takes over\n")
        case nil: break
        }
        return ending ?? .runnerGone
    }

    private func summary(_ runID: String, state: RunState, signal: Int32?) -> RunSummary {
        RunSummary(runID: runID, state: state, resumed: false, stopSignal: signal, counts: [:])
    }
}
