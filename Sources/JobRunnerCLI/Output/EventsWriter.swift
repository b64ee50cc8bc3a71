import ArgumentParser
import Foundation
import Glibc
import JobRunnerCore
import JobRunnerJSON

/// Writes `--events` as JSON lines (SPEC 5.10). The lines of one batch of the runner's messages
/// go out in one `write` (``PendingOutput``), so a reader following the file never sees half a
/// line.
final class EventsWriter: RunObserver, Sendable {
    private let fd: Int32
    private let ownsDescriptor: Bool
    private let pending: PendingOutput
    /// The file's name as given (`-` for standard output).
    let path: String

    /// Opens `path` for appending, or standard output for `-`.
    init(path: String) throws {
        self.path = path
        if path == "-" {
            fd = STDOUT_FILENO
            ownsDescriptor = false
        } else {
            // Owner only, like every file jobrunner writes: events carry job ids, reasons and
            // messages.
            fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                throw ValidationError(
                    "cannot open the events file \(path): \(String(cString: strerror(errno)))")
            }
            ownsDescriptor = true
        }
        pending = PendingOutput(fd: fd)
    }

    deinit {
        pending.flush()
        if ownsDescriptor { close(fd) }
    }

    func record(_ event: RunEvent) {
        var line = event.jsonLine
        line.append(UInt8(ascii: "\n"))
        pending.append(line)
    }

    func flush() { pending.flush() }

    /// A sentence about the events that could not be written, once the run has ended; nil when
    /// all were, or when the only loss is a reader of `--events -` that went away (`| head`:
    /// what it did not read it did not want).
    var problem: String? {
        pending.flush()
        guard let loss = pending.loss, !(path == "-" && loss.code == EPIPE) else { return nil }
        let target = path == "-" ? "standard output" : "the events file \(path)"
        return "\(loss.lines) event line\(loss.lines == 1 ? "" : "s") could not be written to \(target): "
            + "\(String(cString: strerror(loss.code))); the run itself is stored: `jobrunner status` and "
            + "`jobrunner runs` show it"
    }

    /// One event's line, without its line break.
    static func json(_ event: RunEvent) -> String {
        String(decoding: event.jsonLine, as: UTF8.self)
    }
}
