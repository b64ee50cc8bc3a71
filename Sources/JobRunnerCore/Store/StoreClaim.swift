/// The right to commit to a store's runs: who holds it, and its fencing number.
///
/// A store grants a claim (``QueueStore/claim(owner:)``) with a fencing number higher than any
/// it granted before, and checks the claim of every owned commit
/// (``QueueStore/submit(_:under:completion:)``): a commit under any claim but the latest is
/// refused with ``StoreError/Code/staleClaim`` and changes nothing. So an owner that lost its
/// claim (a runner paused past its lease while another took over, a session that ended) can
/// never overwrite what the new owner wrote.
///
/// What makes the owner the only one differs by store: for the LMDB store it is the runner lock
/// (an `flock` on the state directory) that the process holds, and the check is a comparison in
/// memory; a store shared by hosts keeps a lease beside the fencing number and checks both in
/// the transaction of every commit.
public struct StoreClaim: Sendable, Hashable, CustomStringConvertible {
    /// Who holds it, in words for messages: `runner 4242`, `operator 4243`.
    public let owner: String
    /// Higher for every claim the store grants; the store honours only the highest.
    public let fencing: UInt64

    public init(owner: String, fencing: UInt64) {
        self.owner = owner
        self.fencing = fencing
    }

    public var description: String { "\(owner) (claim \(fencing))" }

    /// The error a store gives for a commit under a claim it no longer honours.
    public func refused(current: StoreClaim?) -> StoreError {
        let holder = current.map { " \($0.owner) holds the store's runs now (claim \($0.fencing))," } ?? ""
        return StoreError(
            .staleClaim,
            "the commit of \(owner) under claim \(fencing) was refused:\(holder) so nothing of it was written; stop this runner and let the one that holds the claim go on"
        )
    }
}
