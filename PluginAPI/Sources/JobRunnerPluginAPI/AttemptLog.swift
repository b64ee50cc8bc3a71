import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes lines to an attempt's log file. The file is opened at the first line, so an attempt
/// that logs nothing costs no file.
public final class AttemptLog: Sendable {
    private let path: String?
    private let descriptor = Mutex<Int32?>(nil)

    /// A log that appends to `path`; nil discards what is written.
    public init(path: String?) {
        self.path = path
    }

    deinit {
        descriptor.withLock { fd in
            if let fd { _ = close(fd) }
        }
    }

    /// Appends `line` and a newline.
    public func callAsFunction(_ line: String) {
        append(line + "\n")
    }

    /// Appends `line`, marked as a warning.
    public func warning(_ line: String) {
        append("warning: " + line + "\n")
    }

    /// Appends `line`, marked as an error.
    public func error(_ line: String) {
        append("error: " + line + "\n")
    }

    private func append(_ text: String) {
        guard let path else { return }
        descriptor.withLock { fd in
            if fd == nil {
                var opened = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
                if opened < 0 && errno == ENOENT {
                    // The job's log directory is made at its first line, not for every attempt.
                    let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
                    try? FileManager.default.createDirectory(
                        atPath: directory, withIntermediateDirectories: true)
                    opened = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
                }
                guard opened >= 0 else { return }
                fd = opened
            }
            guard let fd else { return }
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                bytes = bytes.dropFirst(written)
            }
        }
    }
}
