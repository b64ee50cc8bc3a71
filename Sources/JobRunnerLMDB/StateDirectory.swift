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
    public var logsPath: String { path + "/" + Self.logsFolder }
    /// The folder of attempt logs, relative to the state directory, as attempt records store it.
    public static let logsFolder = "logs"

    /// An attempt log's path as stored, made usable: a relative one is under this directory; an
    /// absolute one (stored by earlier versions) is taken as is while it exists, else looked for
    /// at the same place under this directory's `logs` (the state directory was moved).
    public func resolveLogPath(_ stored: String) -> String {
        guard stored.hasPrefix("/") else { return path + "/" + stored }
        if FileManager.default.fileExists(atPath: stored) { return stored }
        let parts = stored.split(separator: "/").map(String.init)
        if let index = parts.lastIndex(of: Self.logsFolder) {
            return ([logsPath] + parts[(index + 1)...]).joined(separator: "/")
        }
        return stored
    }
    public var lockPath: String { path + "/runner.lock" }

    /// Whether a database exists here (read-only commands say so instead of creating one).
    public var hasDatabase: Bool { FileManager.default.fileExists(atPath: databasePath + "/data.mdb") }

    /// Creates the directory if needed; fails with exit-3 errors when the path cannot be one.
    public func prepare() throws(StoreError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw StoreError(
                    .unusable,
                    "the state path \(path) is a file, not a directory; remove it or pass --state DIR")
            }
        }
        do {
            try FileManager.default.createDirectory(atPath: logsPath, withIntermediateDirectories: true)
        } catch {
            throw StoreError(
                .unusable,
                "cannot create the state directory \(path): \(error.localizedDescription); pass --state DIR with a writable directory"
            )
        }
    }

    /// Takes the runner lock, held until the returned value is released or the process dies
    /// (even by SIGKILL: the kernel drops an flock with its last descriptor).
    ///
    /// The lock is an flock on the state directory itself, not on a file in it: a file can be
    /// unlinked or replaced while a runner holds it, and a second runner would then lock the new
    /// one and work beside the first. `runner.lock` only records the holder's pid, for messages.
    public func lockForRunner() throws(StoreError) -> RunnerLock {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            throw StoreError(
                .unusable,
                "cannot open the state directory \(path): \(String(cString: strerror(errno))); check its permissions"
            )
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            close(fd)
            let who = recordedPID().map { "another jobrunner (pid \($0))" } ?? "another jobrunner"
            throw StoreError(
                .locked,
                "the state directory \(path) is in use by \(who); wait for it to finish, stop it, or pass --state DIR"
            )
        }
        // Written aside and renamed into place, so a losing racer reads a whole pid.
        let staging = "\(lockPath).\(getpid())"
        let pidFile = open(staging, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if pidFile >= 0 {
            let text = Array("\(getpid())\n".utf8)
            _ = text.withUnsafeBytes { write(pidFile, $0.baseAddress, $0.count) }
            close(pidFile)
            if rename(staging, lockPath) != 0 { unlink(staging) }
        }
        return RunnerLock(fd: fd)
    }

    /// The pid of the runner that holds the lock, or nil when none does (or its pid file is gone).
    public func lockHolder() -> Int32? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil
        }
        return recordedPID()
    }

    private func recordedPID() -> Int32? {
        let fd = open(lockPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return Self.readPID(fd: fd)
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
        try LMDBQueueStore(directory: databasePath)
    }
}

/// The runner lock; released when this value goes away.
public final class RunnerLock: Sendable {
    private let fd: Int32
    init(fd: Int32) { self.fd = fd }
    deinit { close(fd) }
}
