import Foundation
import Glibc

/// An attempt's log file, capped by keeping the head and the tail (SPEC 5.2): the first
/// `headLimit` bytes go straight to disk, the last `tailLimit` bytes are kept in memory, and
/// what falls between is counted and replaced by one line that says how much was cut.
public final class CappedLog {
    public static let defaultLimit = 10 << 20

    private let fd: Int32
    private let headLimit: Int
    private let tailLimit: Int
    private var written = 0
    private var tail: [UInt8] = []
    /// Start of the oldest byte in `tail` once it has wrapped around.
    private var tailStart = 0
    private var cut = 0
    private var finished = false

    /// Creates (truncating) the log file at `path`, with its directory.
    public init(path: String, limit: Int = CappedLog.defaultLimit) throws {
        var fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 && errno == ENOENT {
            // First attempt of this job: make its directory (and the run's) once.
            let directory = (path as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        self.fd = fd
        headLimit = limit / 2
        tailLimit = limit - limit / 2
    }

    deinit { close(fd) }

    /// Adds output bytes.
    public func append(_ bytes: UnsafeRawBufferPointer) {
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

    /// Adds a line of text, e.g. jobrunner's own note about why an attempt could not start.
    public func appendLine(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        bytes.withUnsafeBytes { append($0) }
    }

    /// Writes the kept tail and closes the file.
    public func finish() {
        guard !finished else { return }
        finished = true
        if cut > 0 {
            let note = "\n[jobrunner: \(cut) bytes of output cut here to keep the log under \(headLimit + tailLimit) bytes]\n"
            Array(note.utf8).withUnsafeBytes { writeAll($0) }
        }
        let ordered = Array(tail[tailStart...] + tail[..<tailStart])
        ordered.withUnsafeBytes { writeAll($0) }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let result = write(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            if result < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += result
        }
    }
}
