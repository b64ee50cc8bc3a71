import Foundation
import JobRunnerCore

/// The runner's store with its commits timed for `jobrunner_store_commit_seconds`: from
/// submission to durable, read off the completion the store calls anyway (one clock read at
/// each end, no waiting added). Everything else goes to the store as is (``ForwardingStore``).
public struct TimedStore: ForwardingStore {
    public let inner: any QueueStore
    let metrics: DashboardMetrics

    public init(_ inner: any QueueStore, metrics: DashboardMetrics) {
        self.inner = inner
        self.metrics = metrics
    }

    public func submit(
        _ changes: [StoreChange], under claim: StoreClaim,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        let start = ContinuousClock.now
        let metrics = self.metrics
        inner.submit(changes, under: claim) { result in
            if case .success = result { metrics.recordCommit(ContinuousClock.now - start) }
            completion(result)
        }
    }
}
