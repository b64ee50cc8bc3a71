/// How one runner at a time comes to work on a store, and how an operator command keeps
/// runners away while it applies a request to a run that has none.
///
/// The LMDB store's is an `flock` on the state directory, held by the runner's process until it
/// ends (even by SIGKILL), beside an operator lock file. A store shared by hosts brings its
/// own: a lease. Whoever holds it takes the store's claim (``QueueStore/claim(owner:)``) and
/// commits under it.
public protocol RunnerLock: Sendable {
    /// Takes the lock for this process's runner, held until the returned value goes away.
    /// - Parameter whileWaiting: called once when an operator command at work must be waited
    ///   for first.
    /// - Throws: ``StoreError/Code/locked``, naming the holder, when another runner holds it.
    func lockForRunner(whileWaiting: () -> Void) async throws(StoreError) -> any RunnerLockHold

    /// Takes the operator lock, waiting for another operator command and for a runner taking
    /// the runner lock; held until the returned value goes away. Meanwhile no runner starts, so
    /// a run found without a runner stays so.
    func lockForOperator(whileWaiting: () -> Void) async throws(StoreError) -> any OperatorLockHold

    /// Whether a runner holds the lock now.
    func runnerWorks() async -> Bool

    /// The pid of the runner that holds the lock now; nil when none does (or it is not known).
    func runnerPID() async -> Int32?
}

/// A held runner lock, released when it goes away.
public protocol RunnerLockHold: AnyObject, Sendable {
    /// Checks, about once a second while the runner works, that the lock still holds what it
    /// was taken for, and mends what it can (the LMDB store writes its pid file again when
    /// someone deleted it, so operator commands find the runner).
    /// - Throws: ``StoreError`` when the store under the lock is gone or replaced (a state
    ///   directory deleted mid-run, a lease lost): the runner stops with it.
    func verify() throws(StoreError)
}

extension RunnerLockHold {
    /// Nothing to check: the hold lasts as long as the process.
    public func verify() throws(StoreError) {}
}

/// A held operator lock, released when it goes away.
public protocol OperatorLockHold: AnyObject, Sendable {
    /// Whether a runner held the runner lock when this lock was taken; when not, none starts
    /// before this lock is released.
    var runnerWorks: Bool { get }
    /// The runner's pid, if it works and its pid is known.
    var runnerPID: Int32? { get }
}
