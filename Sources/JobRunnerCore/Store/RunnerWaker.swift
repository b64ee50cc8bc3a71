/// How a process tells the runner at work on a store to look at it now: operator requests and
/// suspend counts changed.
///
/// The LMDB store's sends SIGUSR1 to the pid its runner lock records; a store shared by hosts
/// brings its own (a database notification). A wake-up only hurries the runner: what it asks
/// for is in the store already.
public protocol RunnerWaker: Sendable {
    /// Wakes the runner at work on the store, if there is one.
    func wakeRunner() async

    /// Calls `wake` each time a process wakes this process's runner, until the returned value
    /// is stopped.
    func listen(_ wake: @escaping @Sendable () -> Void) -> any WakeListening
}

/// A runner's listening for wake-ups (``RunnerWaker/listen(_:)``).
public protocol WakeListening: Sendable {
    /// Stops calling back.
    func stop()
}
