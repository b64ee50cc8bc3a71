import JobRunnerCore
import Synchronization

/// A store as a runner killed (`kill -9`) right after a chosen commit leaves it: that commit
/// and those before it go to the store it wraps; every later one fails and changes nothing, so
/// the runner stops without storing anything more. ``crashed()`` returns once that commit is in.
public final class CrashingStore: QueueStore {
    private struct State {
        var crashed = false
        var watchers: [CheckedContinuation<Void, Never>] = []
    }

    private let inner: any QueueStore
    private let isLast: @Sendable ([StoreChange]) -> Bool
    private let state = Mutex(State())

    /// - Parameter isLast: whether a commit's changes are the last the runner stores.
    public init(_ inner: any QueueStore, crashAfter isLast: @escaping @Sendable ([StoreChange]) -> Bool) {
        self.inner = inner
        self.isLast = isLast
    }

    public func submit(
        _ changes: [StoreChange], completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        if state.withLock({ $0.crashed }) {
            completion(.failure(StoreError(.io, "the runner was killed")))
            return
        }
        inner.submit(changes) { result in
            if case .success = result, self.isLast(changes) { self.crash() }
            completion(result)
        }
    }

    private func crash() {
        let watchers = state.withLock { state in
            state.crashed = true
            defer { state.watchers = [] }
            return state.watchers
        }
        for watcher in watchers { watcher.resume() }
    }

    /// Returns once the last commit is in.
    public func crashed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.crashed { return true }
                state.watchers.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    public func currentRunID() throws(StoreError) -> String? { try inner.currentRunID() }
    public func snapshot(runID: String) throws(StoreError) -> RunSnapshot? {
        try inner.snapshot(runID: runID)
    }
    public func runs() throws(StoreError) -> [RunRecord] { try inner.runs() }
    public func pipelines() throws(StoreError) -> [String: PipelineRecord] { try inner.pipelines() }
    public func schedules() throws(StoreError) -> [String: ScheduleRecord] { try inner.schedules() }
    public func requests(runID: String) throws(StoreError) -> [OperatorRequest] {
        try inner.requests(runID: runID)
    }
    public func updatePipeline(_ name: String, _ change: @Sendable (inout PipelineRecord) -> Void)
        throws(StoreError) -> PipelineRecord
    {
        try inner.updatePipeline(name, change)
    }
}
