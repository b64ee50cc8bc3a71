/// Attempts shared by the hosts of one store (SPEC 8): the runner that decides (the one that
/// holds the store's runner lock) does not start an attempt itself; it hands the attempt to the
/// store as a row that any host's worker claims, runs with its own handlers, and completes.
///
/// A store that several hosts cannot share (LMDB) has none: its runner starts its attempts.
public protocol AttemptSharing: Sendable {
    /// The handler the deciding runner is given: each attempt is queued in the store and its
    /// result awaited. Cancelling the attempt's task (a stop, `cancel`) asks the host that
    /// claimed it to end it.
    /// - Parameter logDirectory: the runner's log directory, which the paths of its requests
    ///   start with; a worker writes under its own.
    func queueing(logDirectory: String) -> any JobHandler

    /// Starts this host's worker: it claims queued attempts, at most `slots` at a time, runs
    /// them with `handler` (the job looked up with `jobs` in this host's own job files) and
    /// completes them under the lease it renews.
    /// - Parameter logDirectory: where this host writes the attempts' logs.
    func work(
        with handler: any JobHandler, jobs: @escaping @Sendable (String) -> JobDefinition?,
        logDirectory: String, slots: Int
    ) -> any AttemptWorking
}

/// A host's worker, started by ``AttemptSharing/work(with:jobs:logDirectory:slots:)``.
public protocol AttemptWorking: Sendable {
    /// How many attempts this worker has completed (whose completion the store took).
    var completed: Int { get }
    /// Stops claiming, ends the attempts it runs (their completions are written as
    /// `interrupted`), and returns once they have ended.
    func stop() async
}
