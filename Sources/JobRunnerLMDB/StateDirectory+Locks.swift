import Dispatch
import Glibc
import JobRunnerCore

extension StateDirectory {
    /// The state directory's runner and operator locks, as a store's ``RunnerLock``.
    public var runnerLock: any RunnerLock { DirectoryLocks(directory: self) }

    /// Waking the runner at work on the state directory: SIGUSR1 to the pid its lock records.
    public var runnerWaker: any RunnerWaker { SignalWaker(directory: self) }
}

/// The runner lock of a state directory (an `flock` on the directory itself) and its operator
/// lock (an `flock` on `operator.lock`), as a ``RunnerLock``.
struct DirectoryLocks: RunnerLock {
    let directory: StateDirectory

    func lockForRunner(whileWaiting: () -> Void) async throws(StoreError) -> any RunnerLockHold {
        try directory.lockForRunner(whileWaiting: whileWaiting)
    }

    func lockForOperator(whileWaiting: () -> Void) async throws(StoreError) -> any OperatorLockHold {
        try directory.lockForOperator(whileWaiting: whileWaiting)
    }

    func runnerWorks() async -> Bool { directory.runnerHoldsLock() }

    func runnerPID() async -> Int32? { directory.lockHolder() }
}

/// Wakes the runner at work on a state directory with SIGUSR1, sent to the pid `runner.lock`
/// records; a runner hears it through a signal source.
struct SignalWaker: RunnerWaker {
    let directory: StateDirectory

    func wakeRunner() async {
        if let pid = directory.lockHolder() { kill(pid, SIGUSR1) }
    }

    func listen(_ wake: @escaping @Sendable () -> Void) -> any WakeListening {
        SignalListening(wake)
    }
}

/// SIGUSR1, heard: the signal's default action (ending the process) is ignored, and a signal
/// source calls back instead.
final class SignalListening: WakeListening, @unchecked Sendable {
    // @unchecked: the source is set once, and a dispatch source may be cancelled from any thread.
    private let source: any DispatchSourceSignal

    init(_ wake: @escaping @Sendable () -> Void) {
        signal(SIGUSR1, SIG_IGN)
        source = DispatchSource.makeSignalSource(
            signal: SIGUSR1, queue: DispatchQueue(label: "jobrunner.wake"))
        source.setEventHandler { wake() }
        source.resume()
    }

    func stop() { source.cancel() }
}

/// The runner lock: an `flock` on the state directory; released when this value goes away.
public final class DirectoryLock: RunnerLockHold {
    private let fd: Int32
    private let directory: StateDirectory
    init(fd: Int32, directory: StateDirectory) {
        self.fd = fd
        self.directory = directory
    }
    deinit { close(fd) }

    /// The directory locked is still the one at the state path, and its pid file is there: a
    /// deleted `runner.lock` is written again (operator commands find the runner's pid in it);
    /// a state directory deleted or replaced while the runner works is an error, so the runner
    /// stops rather than go on with a store that nobody else sees (a second runner would start
    /// on the new directory beside it).
    public func verify() throws(StoreError) {
        var held = stat()
        var current = stat()
        guard fstat(fd, &held) == 0 else { return }
        guard stat(directory.path, &current) == 0, current.st_ino == held.st_ino,
            current.st_dev == held.st_dev
        else {
            throw StoreError(
                .unusable,
                "the state directory \(directory.path) was deleted or replaced while this runner worked on it; stopping: what it would store now would be lost. Start the runner again to begin afresh"
            )
        }
        if access(directory.lockPath, F_OK) != 0 && errno == ENOENT { directory.writePIDFile() }
    }
}

/// An operator command's hold on the state directory (``StateDirectory/lockForOperator(whileWaiting:)``):
/// whether a runner works on it, and its pid; released when this value goes away.
public final class OperatorLock: OperatorLockHold {
    private let fd: Int32
    /// Whether a runner held the runner lock when this lock was taken; when not, none starts
    /// before this lock is released.
    public let runnerWorks: Bool
    /// The runner's pid, if it works and its pid file could be read.
    public let runnerPID: Int32?

    init(fd: Int32, runnerWorks: Bool, runnerPID: Int32?) {
        self.fd = fd
        self.runnerWorks = runnerWorks
        self.runnerPID = runnerPID
    }
    deinit { close(fd) }
}
