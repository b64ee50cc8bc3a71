import Glibc

/// The framing a long-lived worker process and the runner speak over a pair of pipes: each
/// message is its length (4 bytes, big-endian) followed by that many bytes. Reads and writes
/// block the calling thread; both sides call them from a thread of their own.
public enum WorkerFrames {
    /// The largest frame either side accepts: 64 MiB, far beyond any request or response of
    /// the plugin ABI, so a garbled length cannot make the reader allocate without end.
    public static let maximumLength = 64 << 20

    /// Writes one frame to `fd`; false when the other side is gone (EPIPE) or another error
    /// stopped the write.
    public static func write(_ payload: [UInt8], to fd: Int32) -> Bool {
        let length = UInt32(payload.count)
        var frame: [UInt8] = [
            UInt8(truncatingIfNeeded: length >> 24), UInt8(truncatingIfNeeded: length >> 16),
            UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length),
        ]
        frame.reserveCapacity(4 + payload.count)
        frame.append(contentsOf: payload)
        var offset = 0
        while offset < frame.count {
            let written = frame.withUnsafeBytes { buffer in
                Glibc.write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// What ``read(from:)`` found.
    public enum ReadResult: Sendable, Equatable {
        /// A whole frame's payload.
        case frame([UInt8])
        /// The other side closed its end (or died) before a whole frame came.
        case ended
        /// The frame's length is above ``maximumLength``.
        case tooLarge(Int)
    }

    /// Reads one frame from `fd`.
    public static func read(from fd: Int32) -> ReadResult {
        var header = [UInt8](repeating: 0, count: 4)
        guard readFully(fd, into: &header) else { return .ended }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard length <= maximumLength else { return .tooLarge(length) }
        var payload = [UInt8](repeating: 0, count: length)
        guard readFully(fd, into: &payload) else { return .ended }
        return .frame(payload)
    }

    private static func readFully(_ fd: Int32, into bytes: inout [UInt8]) -> Bool {
        var offset = 0
        let count = bytes.count
        while offset < count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(fd, buffer.baseAddress.map { $0 + offset }, count - offset)
            }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { return false }
            offset += got
        }
        return true
    }
}
