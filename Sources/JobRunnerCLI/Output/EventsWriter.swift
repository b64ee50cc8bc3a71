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

    /// Opens `path` for appending, or standard output for `-`.
    init(path: String) throws {
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
        var line = JSONWriter(capacity: 192, style: .shortEscapes)
        Self.write(event, to: &line)
        line.newline()
        pending.append(line.bytes)
    }

    func flush() { pending.flush() }

    /// One event's line, without its line break.
    static func json(_ event: RunEvent) -> String {
        var line = JSONWriter(capacity: 192, style: .shortEscapes)
        write(event, to: &line)
        return String(decoding: line.bytes, as: UTF8.self)
    }

    /// Writes `event` as a JSON object (``RunEvent/writeJSON(to:)``, which the HTTP API's
    /// event stream writes too).
    static func write(_ event: RunEvent, to json: inout JSONWriter) {
        event.writeJSON(to: &json)
    }
}
