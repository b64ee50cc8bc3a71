import ArgumentParser
import Foundation
import Glibc
import JobRunnerCore

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
            fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
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
        pending.append(Self.json(event) + "\n")
    }

    func flush() { pending.flush() }

    static func json(_ event: RunEvent) -> String {
        var fields: [(String, String)] = [
            ("time", JSONValue.quote(Timestamps.iso(event.time))), ("run", JSONValue.quote(event.run)),
        ]
        if let job = event.job { fields.append(("job", JSONValue.quote(job))) }
        if let attempt = event.attempt { fields.append(("attempt", String(attempt))) }
        fields.append(("event", JSONValue.quote(event.kind.rawValue)))
        if let pipeline = event.pipeline { fields.append(("pipeline", JSONValue.quote(pipeline))) }
        if let reason = event.reason { fields.append(("reason", JSONValue.quote(reason))) }
        if let code = event.exitCode { fields.append(("exitCode", String(code))) }
        if let delay = event.delay { fields.append(("delay", String(format: "%.3f", delay.seconds))) }
        if let key = event.key { fields.append(("key", JSONValue.quote(key))) }
        if let value = event.value { fields.append(("value", JSONValue.quote(value))) }
        if let state = event.state { fields.append(("state", JSONValue.quote(state))) }
        return "{" + fields.map { "\(JSONValue.quote($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }
}
