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
    private let losses = Locked(Loss())

    /// What could not be written: how many lines, and the first error's `errno`.
    struct Loss: Sendable, Equatable {
        var lines = 0
        var code: Int32 = 0
    }

    init(fd: Int32) { self.fd = fd }

    /// The lines that could not be written so far (a full disk, `/dev/full`, a closed pipe),
    /// and why; nil when every line was written.
    var loss: Loss? {
        let loss = losses.withLock { $0 }
        return loss.lines > 0 ? loss : nil
    }

    /// Adds `text` (whole lines) after what waits.
    func append(_ text: String) {
        append(text.utf8)
    }

    /// Adds `utf8` (whole lines of text) after what waits.
    func append(_ utf8: some Collection<UInt8>) {
        bytes.withLock { bytes in
            bytes.append(contentsOf: utf8)
            if bytes.count >= Self.limit { write(fd, &bytes) }
        }
    }

    /// Writes what waits, if anything.
    func flush() {
        bytes.withLock { bytes in
            if !bytes.isEmpty { write(fd, &bytes) }
        }
    }

    /// Written under the lock: what two threads append goes out in the order they appended it.
    /// Lines that could not be written are counted (all of them: a partial write is counted
    /// whole, a reader cannot use half a line).
    private func write(_ fd: Int32, _ bytes: inout [UInt8]) {
        let code = writeBytes(fd, bytes)
        if code != 0 {
            let lines = bytes.reduce(0) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            losses.withLock { loss in
                if loss.lines == 0 { loss.code = code }
                loss.lines += max(lines, 1)
            }
        }
        bytes.removeAll(keepingCapacity: true)
    }
}
