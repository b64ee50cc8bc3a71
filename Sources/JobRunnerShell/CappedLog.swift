import Foundation
import Glibc
import JobRunnerCore

/// An attempt's log file, capped by keeping the head and the tail (SPEC 5.2): the first
/// `headLimit` bytes go straight to disk, the last `tailLimit` bytes are kept in memory, and
/// what falls between is counted and replaced by one line that says how much was cut.
///
/// The file (and its directory) is created at the first byte of output: an attempt that
/// prints nothing costs no file-system work, which matters because every file created
/// lengthens the journal commit that the store's next fsync waits for.
///
/// Sendable because a child's output arrives on the task that reads its pipe while the handler
/// that made the log writes its own notes and finishes it; a lock orders them.
public final class CappedLog: Sendable {
    /// 10 MiB per attempt, as SPEC 5.2 says.
    public static let defaultLimit = 10 << 20

    private let state: Locked<State>

    /// A log that will be written to `path` (truncated) once there is output.
    /// - Parameter masker: the secrets replaced by `***` before anything is kept (SPEC 3.1); a
    ///   secret split across two appends is masked too.
    public init(path: String, limit: Int = CappedLog.defaultLimit, masker: SecretMasker = .none) {
        var state = State(path: path, headLimit: limit / 2, tailLimit: limit - limit / 2)
        if !masker.isEmpty { state.masking = MaskingStream(masker) }
        self.state = Locked(state)
    }

    deinit {
        let fd = state.withLock { $0.fd }
        if fd >= 0 { close(fd) }
    }

    /// Why the file could not be opened, if it could not; output is then dropped.
    public var openError: String? { state.withLock { $0.openError } }

    /// What was lost, once ``finish()`` has written all it could: nil when every byte kept
    /// reached the file, else the words for the attempt's record, e.g. `its log could not be
    /// written: No space left on device (4096 bytes lost)`. A log that could not be written
    /// must never pass as one of an attempt that printed nothing.
    public var problem: String? {
        state.withLock { state in
            guard state.lost > 0 else { return nil }
            let error = state.writeError ?? state.openErrno ?? "unknown error"
            return
                "its log could not be written: \(error) (\(state.lost) byte\(state.lost == 1 ? "" : "s") lost)"
        }
    }

    /// Adds output bytes.
    public func append(_ bytes: UnsafeRawBufferPointer) {
        state.withLock { state in
            guard state.masking != nil else { return state.append(bytes) }
            let masked = state.masking?.feed(bytes) ?? []
            masked.withUnsafeBytes { state.append($0) }
        }
    }

    /// Adds a line of text, e.g. jobrunner's own note about why an attempt could not start.
    public func appendLine(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        bytes.withUnsafeBytes { append($0) }
    }

    /// Writes the kept tail and closes the file.
    public func finish() {
        state.withLock { state in
            if let rest = state.masking?.finish() {
                state.masking = nil
                rest.withUnsafeBytes { state.append($0) }
            }
            state.finish()
        }
    }

    /// Makes the missing directories above `path`, each owner only (`0700`) whatever the umask,
    /// like every directory of the state directory (SPEC 3.1): a run's and a job's log folder.
    public static func makeDirectories(for path: String) {
        var missing: [String] = []
        var directory = (path as NSString).deletingLastPathComponent
        var info = stat()
        while !directory.isEmpty, directory != "/", stat(directory, &info) != 0, errno == ENOENT {
            missing.append(directory)
            directory = (directory as NSString).deletingLastPathComponent
        }
        for directory in missing.reversed() where mkdir(directory, 0o700) == 0 {
            chmod(directory, 0o700)
        }
    }

    private struct State {
        let path: String
        let headLimit: Int
        let tailLimit: Int
        var fd: Int32 = -1
        var openError: String?
        var written = 0
        var tail: [UInt8] = []
        /// Start of the oldest byte in `tail` once it has wrapped around.
        var tailStart = 0
        var cut = 0
        var finished = false
        /// The bytes that should have reached the file and did not, and why (the first error).
        var lost = 0
        var writeError: String?
        var openErrno: String?
        /// Secrets not yet masked because they may continue in the next append.
        var masking: MaskingStream?

        init(path: String, headLimit: Int, tailLimit: Int) {
            self.path = path
            self.headLimit = headLimit
            self.tailLimit = tailLimit
        }

        /// Opens the file on first use; false when it cannot be (the reason is in `openError`).
        private mutating func ensureOpen() -> Bool {
            if fd >= 0 { return true }
            if openError != nil { return false }
            // Owner only (SPEC 3.1): a log may hold what a job printed about its credentials.
            fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            if fd < 0 && errno == ENOENT {
                // First output of this job: make its directory (and the run's).
                CappedLog.makeDirectories(for: path)
                fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            }
            if fd < 0 {
                openErrno = String(cString: strerror(errno))
                openError = "cannot write \(path): \(openErrno ?? "")"
            }
            return fd >= 0
        }

        mutating func append(_ bytes: UnsafeRawBufferPointer) {
            var rest = bytes
            if written < headLimit {
                let take = min(headLimit - written, rest.count)
                writeAll(UnsafeRawBufferPointer(rebasing: rest[0..<take]))
                written += take
                rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            }
            guard !rest.isEmpty else { return }
            if rest.count >= tailLimit {
                cut += tail.count + rest.count - tailLimit
                tail = Array(rest[(rest.count - tailLimit)...])
                tailStart = 0
                return
            }
            for byte in rest {
                if tail.count < tailLimit {
                    tail.append(byte)
                } else {
                    tail[tailStart] = byte
                    tailStart = (tailStart + 1) % tailLimit
                    cut += 1
                }
            }
        }

        mutating func finish() {
            guard !finished else { return }
            finished = true
            var ordered = Array(tail[tailStart...] + tail[..<tailStart])
            if cut > 0 {
                // The note takes its bytes from the tail's share, so the log stays within the
                // limit (unless the tail is shorter than the note: a limit of a few bytes).
                var note = Self.note(cut: cut, limit: headLimit + tailLimit)
                var dropped = 0
                while note.count > dropped, note.count <= ordered.count {
                    dropped = note.count
                    note = Self.note(cut: cut + dropped, limit: headLimit + tailLimit)
                }
                if dropped >= note.count {
                    ordered.removeFirst(dropped)
                } else {
                    // Nothing taken from the tail: the note counts only what was cut.
                    note = Self.note(cut: cut, limit: headLimit + tailLimit)
                }
                note.withUnsafeBytes { writeAll($0) }
            }
            ordered.withUnsafeBytes { writeAll($0) }
        }

        private static func note(cut: Int, limit: Int) -> [UInt8] {
            LogCap.note(cut: cut, limit: limit)
        }

        private mutating func writeAll(_ bytes: UnsafeRawBufferPointer) {
            guard !bytes.isEmpty else { return }
            guard ensureOpen() else {
                lost += bytes.count
                return
            }
            var offset = 0
            while offset < bytes.count {
                let result = write(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if result < 0 {
                    if errno == EINTR { continue }
                    // A full disk (ENOSPC), a quota (EDQUOT), an I/O error: counted, said later.
                    if writeError == nil { writeError = String(cString: strerror(errno)) }
                    lost += bytes.count - offset
                    return
                }
                offset += result
            }
        }
    }
}
