/// A store as one owner writes to it: every batch submitted under the owner's claim, which the
/// store checks.
public struct ClaimedStore: Sendable {
    /// The store written to and read from.
    public let base: any QueueStore
    /// The claim each commit is made under.
    public let claim: StoreClaim

    public init(_ base: any QueueStore, claim: StoreClaim) {
        self.base = base
        self.claim = claim
    }

    /// Queues changes for commit under the claim (``QueueStore/submit(_:under:completion:)``).
    public func submit(
        _ changes: [StoreChange], completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        base.submit(changes, under: claim, completion: completion)
    }

    /// Commits changes under the claim and waits until they are durable.
    public func commit(_ changes: [StoreChange]) async throws(StoreError) {
        try await base.commit(changes, under: claim)
    }
}
