import Foundation
import Glibc

/// Writes all of `text` to a descriptor.
func writeText(_ fd: Int32, _ text: String) {
    writeBytes(fd, Array(text.utf8))
}

/// Writes all of `bytes` to a descriptor; gives up quietly when it cannot (a closed pipe).
/// - Returns: 0 when every byte was written, else the `errno` of the write that failed
///   (`EPIPE`: the reader went away).
@discardableResult
func writeBytes(_ fd: Int32, _ bytes: some ContiguousBytes) -> Int32 {
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return 0
    }
}

/// Standard output can no longer be written (its reader went away, as `| head` does): a
/// command that prints a stream stops there, quietly, as `cat` would.
struct OutputClosed: Error {
    /// The `errno` of the write that failed.
    var code: Int32

    /// Writes `bytes` to standard output; throws when they cannot all be written.
    static func write(_ bytes: some ContiguousBytes) throws(OutputClosed) {
        let code = writeBytes(STDOUT_FILENO, bytes)
        if code != 0 { throw OutputClosed(code: code) }
    }
}
