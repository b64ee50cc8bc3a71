import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The cap on an attempt's log (SPEC 5.2: 10 MiB, the head and the tail kept, with a line that
/// says how much was cut), for logs a handler did not write through a capped writer: a plugin
/// call apart from the runner writes its standard output and error straight into its log, and
/// that file is cut to the cap once the call has ended.
public enum LogCap {
    /// 10 MiB per attempt, as SPEC 5.2 says.
    public static let limit = 10 << 20

    /// The line that replaces what was cut, as every capped log says it.
    public static func note(cut: Int, limit: Int) -> [UInt8] {
        Array("\n[jobrunner: \(cut) bytes of output cut here to keep the log within \(limit) bytes]\n".utf8)
    }

    /// Cuts the file at `path` to `limit` bytes when it is longer, keeping its first half and
    /// its end, the note between them (within the limit), through a new file (owner only)
    /// renamed over it, so a reader sees the whole old file or the whole new one. A file that
    /// cannot be read or rewritten is left as it is.
    public static func cap(_ path: String, limit: Int = LogCap.limit) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let size = Int(lseek(fd, 0, SEEK_END))
        guard size > limit else { return }
        let headCount = limit / 2
        var tailCount = limit - headCount
        var note = Self.note(cut: size - headCount - tailCount, limit: limit)
        // The note takes its bytes from the tail's share (its length grows with the count).
        for _ in 0..<3 where tailCount > note.count {
            tailCount = limit - headCount - note.count
            note = Self.note(cut: size - headCount - tailCount, limit: limit)
        }
        guard let head = read(fd, count: headCount, at: 0),
            let tail = read(fd, count: max(0, tailCount), at: size - max(0, tailCount))
        else { return }
        let staging = path + ".capping"
        let out = open(staging, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard out >= 0 else { return }
        var written = true
        for part in [head, note, tail] where written {
            written = part.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let count = write(out, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { return false }
                    offset += count
                }
                return true
            }
        }
        close(out)
        if !written || rename(staging, path) != 0 { unlink(staging) }
    }

    private static func read(_ fd: Int32, count: Int, at offset: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                pread(fd, buffer.baseAddress.map { $0 + done }, count - done, off_t(offset + done))
            }
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { return nil }
            done += got
        }
        return bytes
    }
}
