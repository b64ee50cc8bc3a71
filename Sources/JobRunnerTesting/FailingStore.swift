import JobRunnerCore

/// A store whose commits fail on demand, as on a full disk: reads and the commits before
/// ``startFailing(_:)`` go to the store it wraps; from then on every commit fails and changes
/// nothing.
public final class FailingStore: ForwardingStore {
    public let inner: any QueueStore
    private let failure = Locked<StoreError?>(nil)

    public init(_ inner: any QueueStore = InMemoryQueueStore()) { self.inner = inner }

    /// Makes every later commit fail with `error`.
    public func startFailing(
        _ error: StoreError = StoreError(.io, "mdb_txn_commit: No space left on device")
    ) {
        failure.withLock { $0 = error }
    }

    public func submit(
        _ changes: [StoreChange], under claim: StoreClaim,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        if let error = failure.withLock({ $0 }) {
            completion(.failure(error))
            return
        }
        inner.submit(changes, under: claim, completion: completion)
    }
}
