import Foundation
import JobRunnerCore

/// The store's rows as the writers this layer replaced wrote them (`RowWriter` and Core's
/// `JSONWriter`), made here as text: the stored bytes must not change.
enum EarlierRows {
    /// `text` quoted as the earlier writers quoted it: a quote and a backslash after a
    /// backslash, other control characters as `\u00xx`, the rest as its UTF-8.
    static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = [0x22]
        for byte in text.utf8 {
            switch byte {
            case 0x22, 0x5C: bytes += [0x5C, byte]
            case 0..<0x20:
                bytes +=
                    Array("\\u00".utf8) + Array(String(byte >> 4, radix: 16).utf8)
                    + Array(String(byte & 0xF, radix: 16).utf8)
            default: bytes.append(byte)
            }
        }
        bytes.append(0x22)
        return String(decoding: bytes, as: UTF8.self)
    }

    static func seconds(_ date: Date) -> String {
        let value = date.timeIntervalSinceReferenceDate
        return value.isFinite ? value.description : "null"
    }

    static func job(_ job: JobRecord) -> [UInt8] {
        var row = #"{"jobID":"# + quoted(job.jobID)
        if !job.occurrence.isEmpty { row += #","occurrence":"# + quoted(job.occurrence) }
        row += #","pipeline":"# + quoted(job.pipeline)
        if !job.needs.isEmpty { row += #","needs":["# + job.needs.map(quoted).joined(separator: ",") + "]" }
        if let value = job.maxAttempts { row += #","maxAttempts":\#(value)"# }
        row += #","state":"# + quoted(job.state.rawValue)
        if let words = job.reason?.words { row += #","reason":"# + quoted(words) }
        row += #","attempts":\#(job.attempts)"#
        if job.uncountedAttempts != 0 { row += #","uncountedAttempts":\#(job.uncountedAttempts)"# }
        if job.crashedInARow != 0 { row += #","crashedInARow":\#(job.crashedInARow)"# }
        if let value = job.exitCode { row += #","exitCode":\#(value)"# }
        for (name, date) in [
            ("firstStartedAt", job.firstStartedAt), ("startedAt", job.startedAt),
            ("finishedAt", job.finishedAt),
            ("nextAttemptAt", job.nextAttemptAt), ("waitingSince", job.waitingSince),
        ] {
            if let date { row += #","\#(name)":"# + seconds(date) }
        }
        if job.allowFailure { row += #","allowFailure":true"# }
        if job.when != .success { row += #","when":"# + quoted(job.when.rawValue) }
        return Array((row + "}").utf8)
    }

    static func attempt(_ attempt: AttemptRecord) -> [UInt8] {
        var row = #"{"jobID":"# + quoted(attempt.jobID)
        row += #","occurrence":"# + quoted(attempt.occurrence)
        row += #","number":\#(attempt.number)"#
        if let value = attempt.outcome { row += #","outcome":"# + quoted(value.rawValue) }
        row += #","startedAt":"# + seconds(attempt.startedAt)
        if let value = attempt.finishedAt { row += #","finishedAt":"# + seconds(value) }
        if let value = attempt.exitCode { row += #","exitCode":\#(value)"# }
        if let value = attempt.signal { row += #","signal":\#(value)"# }
        if let value = attempt.reason { row += #","reason":"# + quoted(value) }
        if let value = attempt.pid { row += #","pid":\#(value)"# }
        if let value = attempt.pidStartTime { row += #","pidStartTime":\#(value)"# }
        if let value = attempt.logPath { row += #","logPath":"# + quoted(value) }
        return Array((row + "}").utf8)
    }

    static func run(_ run: RunRecord) -> [UInt8] {
        var row = #"{"id":"# + quoted(run.id) + #","state":"# + quoted(run.state.rawValue)
        row += #","startedAt":"# + seconds(run.startedAt)
        if let value = run.finishedAt { row += #","finishedAt":"# + seconds(value) }
        row += #","jobIDs":["# + run.jobIDs.map(quoted).joined(separator: ",") + "]"
        row += #","runnerPID":\#(run.runnerPID)"#
        row += #","pipelineLimits":{"#
        row +=
            run.pipelineLimits.keys.sorted().map { quoted($0) + ":\(run.pipelineLimits[$0]!)" }
            .joined(separator: ",") + "}"
        if let value = run.occurrenceOf { row += #","occurrenceOf":"# + quoted(value) }
        if let value = run.scheduledAt { row += #","scheduledAt":"# + seconds(value) }
        if let value = run.manual { row += #","manual":"# + (value ? "true" : "false") }
        return Array((row + "}").utf8)
    }
}
