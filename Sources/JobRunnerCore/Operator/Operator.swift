import Foundation

/// The operator actions (SPEC 4): `retry`, `skip`, `cancel`, `suspend` and `resume`, with or
/// without a runner at work. One code path for the commands and the HTTP API: each says what
/// it did through ``Line``s as the command prints them, and ends with an ``Outcome``.
public struct Operator: Sendable {
    /// A line of what an action says, in order.
    public enum Line: Sendable, Hashable {
        /// What the command prints on standard output: what was done.
        case message(String)
        /// Why something was not done (standard error, without the `jobrunner: ` prefix).
        case problem(String)
        /// That the action waits (for another command, for the runner); standard error.
        case notice(String)
    }

    /// How an action ended.
    public enum Outcome: Sendable, Hashable {
        /// Done (exit 0).
        case done
        /// No such run, job or pipeline (exit 1, or 2 for a pipeline no run has used).
        case notFound(exitStatus: Int32)
        /// Refused as the run stands: a job that cannot be retried, a pipeline not suspended
        /// (exit 1).
        case refused
        /// The store could not be used (exit 3).
        case storeFailed

        /// The command's exit status.
        public var exitStatus: Int32 {
            switch self {
            case .done: 0
            case .notFound(let status): status
            case .refused: 1
            case .storeFailed: 3
            }
        }
    }

    /// The queries actions read through; its store is written, its lock taken.
    public let reader: ReadModel
    /// The operator and runner locks of the store.
    public let lock: any RunnerLock
    /// How the runner at work is woken.
    public let waker: any RunnerWaker
    /// Ends the processes of attempts a dead runner left behind.
    public let orphans: any OrphanTerminator
    /// Where the state is, for messages (`no runs yet in PATH`).
    public let place: String
    /// When an action says it still waits for the runner to take its request.
    public var slowRunnerNotice: Duration = .seconds(3)

    public init(
        reader: ReadModel, lock: any RunnerLock, waker: any RunnerWaker, orphans: any OrphanTerminator,
        place: String
    ) {
        self.reader = reader
        self.lock = lock
        self.waker = waker
        self.orphans = orphans
        self.place = place
    }

    var store: any QueueStore { reader.store }

    // MARK: Pipelines

    /// One more level of suspension of `pipeline` (SPEC 5.3), and a live runner woken.
    public func suspend(_ pipeline: String, say: (Line) -> Void) async -> Outcome {
        await adjustSuspension(pipeline, by: 1, say: say)
    }

    /// One level of suspension less.
    public func resume(_ pipeline: String, say: (Line) -> Void) async -> Outcome {
        await adjustSuspension(pipeline, by: -1, say: say)
    }

    /// Changes a pipeline's persisted suspend count and wakes a live runner. A name that no run
    /// has used and no suspension holds is refused (a typo would otherwise suspend nothing).
    private func adjustSuspension(_ pipeline: String, by delta: Int, say: (Line) -> Void) async -> Outcome {
        do {
            let known = try await reader.knownPipelines()
            if !known.isEmpty, !known.contains(pipeline) {
                say(
                    .problem(
                        "no pipeline '\(pipeline)'\(Suggestion.hint(for: pipeline, in: known.sorted()))"
                            + " (known: \(known.sorted().joined(separator: ", ")))"))
                return .notFound(exitStatus: 2)
            }
            let notSuspended = "pipeline \(pipeline) is not suspended"
            if delta < 0, (try await reader.pipelines()[pipeline]?.suspended ?? 0) == 0 {
                say(.problem(notSuspended))
                return .refused
            }
            // Checked again, and changed, in one transaction: of ten `resume`s racing after one
            // `suspend`, one finds the count at 1; the others find it at 0 and change nothing.
            let wasSuspended = Locked(false)
            let record = try await store.updatePipeline(pipeline) { record in
                wasSuspended.withLock { $0 = record.suspended > 0 }
                if delta < 0 && record.suspended == 0 { return }
                record.suspended = max(0, record.suspended + delta)
            }
            if delta < 0, !wasSuspended.withLock({ $0 }) {
                say(.problem(notSuspended))
                return .refused
            }
            await waker.wakeRunner()
            if delta > 0 {
                say(.message("pipeline \(pipeline) suspended (count \(record.suspended))"))
            } else {
                say(
                    .message(
                        record.suspended == 0
                            ? "pipeline \(pipeline) resumed"
                            : "pipeline \(pipeline) still suspended (count \(record.suspended))"))
            }
            return .done
        } catch {
            say(.problem("\(error)"))
            return .storeFailed
        }
    }
}
