import JobRunnerCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The most jobrunner reads of anything whose size a plugin reports: a length or a count from
/// a plugin is a claim, and a wrong one must cost a refusal, not the runner's memory or a read
/// past the end of a buffer.
public enum PluginLimits {
    /// The largest response `invoke` may return, in bytes.
    public static let responseBytes = 16 << 20
    /// The longest NUL-terminated string read from a plugin (a parameter check's message, a
    /// name, a version), in bytes before the NUL.
    public static let textBytes = 64 << 10
    /// The most handlers a descriptor may list.
    public static let handlers = 4096
    /// The longest message of a response kept, in bytes: the message is a job's reason, one line
    /// of progress, `status`, events and the store. A longer one is cut, and says so.
    public static let messageBytes = 4 << 10

    /// `message`, cut to ``messageBytes`` (at a character's start) with a note of how much went.
    static func message(_ message: String) -> String {
        let bytes = message.utf8
        guard bytes.count > messageBytes else { return message }
        var end = bytes.index(bytes.startIndex, offsetBy: messageBytes)
        // Back to the first byte of a character, so the cut never splits one.
        while end > bytes.startIndex && (bytes[end] & 0xC0) == 0x80 { end = bytes.index(before: end) }
        let kept = bytes.distance(from: bytes.startIndex, to: end)
        return String(decoding: bytes[..<end], as: UTF8.self)
            + " [jobrunner: \(bytes.count - kept) more bytes of the plugin's message cut]"
    }

    /// "16 MiB", "64 KiB": a limit as people read it.
    static func describe(bytes: Int) -> String {
        AttemptEnd.describe(bytes: bytes)
    }

    /// The NUL-terminated string at `pointer`, read no further than `limit` bytes; nil when no
    /// NUL comes within them.
    static func text(at pointer: UnsafePointer<CChar>, limit: Int = textBytes) -> String? {
        let length = strnlen(pointer, limit + 1)
        guard length <= limit else { return nil }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
            String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)
        }
    }
}
