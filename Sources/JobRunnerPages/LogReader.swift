import Foundation

/// Reading a log that may be large and still growing, never whole: a bounded tail, from the
/// start of a line.
enum LogReader {
    struct Tail {
        /// The bytes shown.
        var bytes: [UInt8]
        /// Where they start in the file.
        var start: UInt64
        /// The file's size when it was read: where a follower goes on from.
        var size: UInt64
    }

    /// The last `limit` bytes of the file (from the first line start within them when the
    /// file is longer); empty when there is no file.
    static func tail(path: String, limit: UInt64) -> Tail {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return Tail(bytes: [], start: 0, size: 0) }
        defer { close(fd) }
        let end = lseek(fd, 0, SEEK_END)
        guard end >= 0 else { return Tail(bytes: [], start: 0, size: 0) }
        let size = UInt64(end)
        var start = size > limit ? size - limit : 0
        var bytes = read(fd, from: start, count: Int(size - start))
        if start > 0, let newline = bytes.firstIndex(of: 0x0A), newline < bytes.count - 1 {
            bytes.removeSubrange(0...newline)
            start += UInt64(newline + 1)
        }
        return Tail(bytes: bytes, start: start, size: start + UInt64(bytes.count))
    }

    /// How many bytes at the end of `bytes` begin a UTF-8 character they do not finish (a log
    /// read while it is written): a follower fetches them again with the rest.
    static func unfinishedUTF8(_ bytes: [UInt8]) -> Int {
        var back = 0
        for byte in bytes.reversed().prefix(4) {
            back += 1
            if byte & 0xC0 == 0x80 { continue }  // a continuation byte: look further back
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            return length > back ? back : 0
        }
        return 0
    }

    private static func read(_ fd: Int32, from offset: UInt64, count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return pread(fd, base + done, count - done, off_t(offset) + off_t(done))
            }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            done += got
        }
        return Array(bytes[0..<done])
    }
}
