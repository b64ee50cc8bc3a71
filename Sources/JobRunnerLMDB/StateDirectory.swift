import Foundation
import Glibc
import JobRunnerCore

/// The state directory's layout: the database in `db/`, attempt logs in `logs/`, and the
/// `runner.lock` file that lets one runner at a time work on it.
public struct StateDirectory: Sendable {
    public let path: String

    /// - Parameter path: absolute, or relative to the current directory (made absolute here,
    ///   since jobs run in their own working directories and get paths under it).
    public init(path: String) {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        self.path = (absolute as NSString).standardizingPath
    }

    public var databasePath: String { path + "/db" }
    public var logsPath: String { logs.logsPath }
    /// The folder of attempt logs, relative to the state directory, as attempt records store it.
    public static let logsFolder = LogLocation.folder
    /// Where the attempt logs are, for the read model.
    public var logs: LogLocation { LogLocation(stateDirectory: path) }

    /// An attempt log's path as stored, made usable (``LogLocation/resolve(_:)``).
    public func resolveLogPath(_ stored: String) -> String { logs.resolve(stored) }
    public var lockPath: String { path + "/runner.lock" }
    /// The file whose flock operator commands hold while they act, and runners while they take
    /// the runner lock: an operator command never holds the runner lock, so it is never taken
    /// for a runner, and no runner starts while one applies requests to a run without a runner.
    public var operatorLockPath: String { path + "/operator.lock" }

    /// Whether a database exists here (read-only commands say so instead of creating one).
    /// Also true when the state path is there but cannot be used (a file where a directory
    /// belongs, no permission to look inside), so that opening it says why instead of
    /// "no runs yet".
    public var hasDatabase: Bool {
        var info = stat()
        if stat(databasePath + "/data.mdb", &info) == 0 { return true }
        return errno != ENOENT
    }

    /// Creates the directory if needed, readable by its owner only (SPEC 3.1: `0700`, its files
    /// `0600`); fails with exit-3 errors when the path cannot be one. A directory made by an
    /// older jobrunner with wider permissions is narrowed.
    public func prepare() throws(StoreError) {
        try checkPlaces()
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw StoreError(
                .unusable,
                "cannot create the state directory \(path): \(Self.whyNotCreated(path)); pass --state DIR with a writable directory",
                cause: error)
        }
        do {
            let ownerOnly: [FileAttributeKey: Any] = [.posixPermissions: 0o700]
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: ownerOnly)
            try FileManager.default.createDirectory(
                atPath: logsPath, withIntermediateDirectories: true, attributes: ownerOnly)
            var info = stat()
            if stat(path, &info) == 0, info.st_uid == getuid(), info.st_mode & 0o077 != 0 {
                chmod(path, 0o700)
            }
        } catch {
            throw StoreError(
                .unusable,
                "cannot create the logs directory \(logsPath): \(Self.whyNotCreated(logsPath)); check the permissions of \(path) or pass --state DIR",
                cause: error)
        }
    }

    /// Why a directory could not be made at `path`, in the system's words (Foundation's say
    /// "The operation could not be completed"): a symbolic link to nothing, an ancestor that is
    /// not a directory, or the error of making the first missing one.
    static func whyNotCreated(_ path: String) -> String {
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK, stat(path, &info) != 0 {
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
            return "it is a symbolic link to \(target), which does not exist"
        }
        var missing = path
        var parent = (path as NSString).deletingLastPathComponent
        while !parent.isEmpty && parent != missing && stat(parent, &info) != 0 {
            missing = parent
            parent = (parent as NSString).deletingLastPathComponent
        }
        if !parent.isEmpty && info.st_mode & S_IFMT != S_IFDIR { return "\(parent) is not a directory" }
        if mkdir(missing, 0o700) == 0 {
            rmdir(missing)
            return "it could not be made (try again)"
        }
        let error = errno
        return (missing == path ? "" : "\(missing): ") + String(cString: strerror(error))
    }

    /// Fails with a sentence when the state path, its `db/` or its `logs/` is there but is not a
    /// directory, or when the state directory cannot be read; what does not exist yet is fine.
    func checkPlaces() throws(StoreError) {
        let places = [
            (path, "the state path", "remove it or pass --state DIR"),
            (
                databasePath, "\(databasePath), where the state database belongs,",
                "move it aside or pass --state DIR"
            ),
            (logsPath, "\(logsPath), where the attempt logs belong,", "move it aside or pass --state DIR"),
        ]
        for (place, name, remedy) in places {
            var info = stat()
            guard stat(place, &info) == 0 else {
                let error = errno
                if error == ENOENT { continue }
                throw StoreError(
                    .unusable,
                    "cannot use the state directory \(path): \(place): \(String(cString: strerror(error))); check its permissions or pass --state DIR"
                )
            }
            guard info.st_mode & S_IFMT == S_IFDIR else {
                let what = place == path ? "\(name) \(path)" : name
                throw StoreError(.unusable, "\(what) is a file, not a directory; \(remedy)")
            }
            guard access(place, R_OK | X_OK) == 0 else {
                throw StoreError(
                    .unusable,
                    "cannot read the directory \(place): \(String(cString: strerror(errno))); check its permissions or pass --state DIR"
                )
            }
        }
    }

    /// Takes the runner lock, held until the returned value is released or the process dies
    /// (even by SIGKILL: the kernel drops an flock with its last descriptor).
    ///
    /// The lock is an flock on the state directory itself, not on a file in it: a file can be
    /// unlinked or replaced while a runner holds it, and a second runner would then lock the new
    /// one and work beside the first. `runner.lock` only records the holder's pid, for messages.
    ///
    /// An operator command at work (``lockForOperator(whileWaiting:)``) is waited for first,
    /// `whileWaiting` called once if it must be: such a command is short, and a runner that
    /// started meanwhile would resume the run it is changing.
    public func lockForRunner(whileWaiting: () -> Void = {}) throws(StoreError) -> DirectoryLock {
        let operatorLock = takeOperatorLock(whileWaiting: whileWaiting)
        defer { if operatorLock >= 0 { close(operatorLock) } }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            throw StoreError(
                .unusable,
                "cannot open the state directory \(path): \(String(cString: strerror(errno))); check its permissions"
            )
        }
        // The pid file's own flock orders taking the lock with writing the pid: a runner holds
        // it from before it tries the directory until its pid is written, and a runner that
        // loses reads the pid only once it holds that flock in turn. So a loser always reads the
        // winner's pid, never an empty file nor a pid left by a runner that has died.
        let pidFile = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        defer { if pidFile >= 0 { close(pidFile) } }
        if pidFile >= 0 { Self.waitForFlock(pidFile, LOCK_EX) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            close(fd)
            let holder = pidFile >= 0 ? Self.readPID(fd: pidFile) : recordedPID()
            let who = holder.map { "another jobrunner (pid \($0))" } ?? "another jobrunner"
            throw StoreError(
                .locked,
                "the state directory \(path) is in use by \(who); wait for it to finish, stop it, or pass --state DIR"
            )
        }
        if pidFile >= 0 { Self.writePID(to: pidFile) }
        return DirectoryLock(fd: fd, directory: self)
    }

    /// Writes this process's pid into `runner.lock` again (a runner whose pid file someone
    /// deleted), under the file's flock as when the lock was taken.
    func writePIDFile() {
        let pidFile = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard pidFile >= 0 else { return }
        defer { close(pidFile) }
        Self.waitForFlock(pidFile, LOCK_EX)
        Self.writePID(to: pidFile)
    }

    private static func writePID(to pidFile: Int32) {
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(pidFile, 0)
        _ = text.withUnsafeBytes { pwrite(pidFile, $0.baseAddress, $0.count, 0) }
    }

    /// Takes the operator lock for an operator command (`retry`, `skip`, `cancel`), waiting for
    /// any other one at work and for a runner taking the runner lock, `whileWaiting` called once
    /// if it must wait. Held until the returned value goes away (or the process dies, even by
    /// SIGKILL); meanwhile no runner starts, so a run it finds without a runner stays so.
    public func lockForOperator(whileWaiting: () -> Void = {}) throws(StoreError) -> OperatorLock {
        let fd = takeOperatorLock(whileWaiting: whileWaiting)
        guard fd >= 0 else {
            throw StoreError(
                .unusable,
                "cannot open \(operatorLockPath): \(String(cString: strerror(errno))); check the permissions of \(path)"
            )
        }
        let runner = runnerHoldsLock()
        return OperatorLock(fd: fd, runnerWorks: runner, runnerPID: runner ? recordedPID() : nil)
    }

    /// Opens and flocks the operator lock file, waiting for it; -1 when it cannot be opened (a
    /// runner then goes on without it, as with an unusable pid file).
    private func takeOperatorLock(whileWaiting: () -> Void) -> Int32 {
        var fd = open(operatorLockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if fd < 0 { fd = open(operatorLockPath, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { return -1 }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            whileWaiting()
            Self.waitForFlock(fd, LOCK_EX)
        }
        return fd
    }

    /// The pid of the runner that holds the lock, or nil when none does (or its pid file is gone).
    /// Only runners hold it: an operator command holds the operator lock instead.
    public func lockHolder() -> Int32? {
        runnerHoldsLock() ? recordedPID() : nil
    }

    /// The pid in `runner.lock`, read under its flock (held by a runner only while it writes).
    private func recordedPID() -> Int32? {
        let fd = open(lockPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        Self.waitForFlock(fd, LOCK_SH)
        return Self.readPID(fd: fd)
    }

    /// Takes an flock, waiting for it: the pid file's is only ever held for a few system calls.
    private static func waitForFlock(_ fd: Int32, _ operation: Int32) {
        while flock(fd, operation) != 0 && errno == EINTR {}
    }

    private static func readPID(fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(
            String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        )
    }

    /// Opens the database.
    public func openStore() throws(StoreError) -> LMDBQueueStore {
        try checkPlaces()
        return try LMDBQueueStore(directory: databasePath)
    }

    /// Opens the existing database for reading only (`status`, `runs`, `logs`, `wait`): nothing
    /// in the state directory is created or changed, so an archived one, or one on read-only
    /// media, can be read.
    ///
    /// LMDB registers each reader in its lock file, so that a writer does not reuse the pages
    /// it reads. When that file cannot be written (a read-only mount, another user's file) the
    /// database is read without it, which is safe only while no runner writes: with a runner
    /// at work this fails with a sentence instead.
    public func openStoreForReading() throws(StoreError) -> LMDBQueueStore {
        try checkPlaces()
        let lockFile = databasePath + "/lock.mdb"
        var lockUsable = access(lockFile, R_OK | W_OK) == 0
        if !lockUsable && errno == ENOENT { lockUsable = access(databasePath, W_OK) == 0 }
        let lockError = errno
        if !lockUsable { try refuseReadingWithoutLockFile(because: String(cString: strerror(lockError))) }
        // A reader that goes on reading (`wait`, `logs -f`) asks again before each read: a
        // runner may start meanwhile.
        let directory = self
        var check: (@Sendable () throws(StoreError) -> Void)?
        if !lockUsable {
            check = { () throws(StoreError) in try directory.refuseReadingWithoutLockFile() }
        }
        return try LMDBQueueStore(
            readingOnly: databasePath, withoutLockFile: !lockUsable, checkBeforeEachRead: check)
    }

    /// Fails with a sentence when a runner works on the directory: a store that reads without
    /// LMDB's lock file (``LMDBQueueStore/readsWithoutLockFile``) may not read meanwhile. A reader
    /// that goes on reading (`wait`) asks again before each read: a runner may start meanwhile.
    public func refuseReadingWithoutLockFile(because reason: String = "it cannot be written")
        throws(StoreError)
    {
        guard runnerHoldsLock() else { return }
        let pid = lockHolder().map { " (pid \($0))" } ?? ""
        throw StoreError(
            .unusable,
            "cannot read the state directory \(path) while its runner\(pid) works on it: its database's lock file \(databasePath)/lock.mdb cannot be written (\(reason)); try again when the runner is done, or as the user it runs as"
        )
    }

    /// Whether a runner holds the runner lock now.
    public func runnerHoldsLock() -> Bool {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard flock(fd, LOCK_SH | LOCK_NB) == 0 else { return true }
        flock(fd, LOCK_UN)
        return false
    }

    /// The store opened early (``openExistingStoreReadingAhead()``) when it still holds the
    /// data file now at this directory's database path (checked once the runner lock is held:
    /// the directory may have been moved aside or replaced meanwhile), else the database opened
    /// afresh.
    public func openStore(openedEarly early: LMDBQueueStore?) throws(StoreError) -> LMDBQueueStore {
        if let early {
            if early.environment.holdsFile(at: databasePath + "/data.mdb") { return early }
            early.close()
        }
        return try openStore()
    }

    /// Opens the database, if one is here already, and reads the current run's rows ahead
    /// (``LMDBQueueStore/readAhead()``): a runner does this on a thread of its own while its job
    /// files load. Nil when there is no database yet or it cannot be opened now; opening it
    /// again (``openStore()``, after the runner lock is taken) says why. Creates nothing.
    public func openExistingStoreReadingAhead() async -> LMDBQueueStore? {
        var info = stat()
        guard stat(databasePath + "/data.mdb", &info) == 0 else { return nil }
        return await withCheckedContinuation { continuation in
            // A thread, not a task: the job files' parts are parsed on the cooperative pool
            // meanwhile, and reading a run of 100,000 jobs would hold one of its threads.
            Thread {
                let store = try? openStore()
                store?.readAhead()
                continuation.resume(returning: store)
            }.start()
        }
    }
}
