import JobRunnerCore

/// A store as a runner killed (`kill -9`) right after a chosen commit leaves it: that commit
/// and those before it go to the store it wraps; every later one fails and changes nothing, so
/// the runner stops without storing anything more. ``crashed()`` returns once that commit is in.
public final class CrashingStore: ForwardingStore {
    private struct State {
        var crashed = false
        var watchers: [CheckedContinuation<Void, Never>] = []
    }

    public let inner: any QueueStore
    private let isLast: @Sendable ([StoreChange]) -> Bool
    private let state = Locked(State())

    /// - Parameter isLast: whether a commit's changes are the last the runner stores.
    public init(_ inner: any QueueStore, crashAfter isLast: @escaping @Sendable ([StoreChange]) -> Bool) {
        self.inner = inner
        self.isLast = isLast
    }

    public func submit(
        _ changes: [StoreChange], under claim: StoreClaim,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        if state.withLock({ $0.crashed }) {
            completion(.failure(StoreError(.io, "the runner was killed")))
            return
        }
        inner.submit(changes, under: claim) { result in
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
}
