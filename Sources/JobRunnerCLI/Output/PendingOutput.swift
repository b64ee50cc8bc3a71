import JobRunnerCore

/// Text an observer was given and has not written yet. It goes out in one `write` on
/// ``flush()``, which the runner calls once per batch of messages, or sooner once it grows past
/// ``limit`` (the opening of 100,000 jobs reports them all at once). Whole lines only: a reader
/// following the output never sees half of one.
final class PendingOutput: Sendable {
    /// How many bytes wait at most before they are written anyway.
    static let limit = 64 * 1024

    private let fd: Int32
    private let bytes = Locked<[UInt8]>([])

    init(fd: Int32) { self.fd = fd }

    /// Adds `text` (whole lines) after what waits.
    func append(_ text: String) {
        append(text.utf8)
    }

    /// Adds `utf8` (whole lines of text) after what waits.
    func append(_ utf8: some Collection<UInt8>) {
        bytes.withLock { bytes in
            bytes.append(contentsOf: utf8)
            if bytes.count >= Self.limit { Self.write(fd, &bytes) }
        }
    }

    /// Writes what waits, if anything.
    func flush() {
        bytes.withLock { bytes in
            if !bytes.isEmpty { Self.write(fd, &bytes) }
        }
    }

    /// Written under the lock: what two threads append goes out in the order they appended it.
    private static func write(_ fd: Int32, _ bytes: inout [UInt8]) {
        writeBytes(fd, bytes)
        bytes.removeAll(keepingCapacity: true)
    }
}
