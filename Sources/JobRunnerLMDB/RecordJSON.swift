import Foundation
import JobRunnerCore

/// The JSON of the two records written on every transition, written directly.
///
/// Every attempt writes a job record and an attempt record when it starts and again when it
/// ends; with `JSONEncoder` those four encodings were a fifth of the runner's time on 20,000
/// no-op plugin jobs. The bytes are what `JSONEncoder` writes for the synthesized `Codable`
/// conformances (dates as seconds since the reference date, absent optionals left out), so
/// `JSONDecoder` reads them back unchanged and older states stay readable.
enum RecordJSON {
    static func encode(_ job: JobRecord) -> [UInt8] {
        var writer = ObjectWriter()
        writer.string("jobID", job.jobID)
        writer.string("occurrence", job.occurrence)
        writer.string("pipeline", job.pipeline)
        writer.strings("needs", job.needs)
        writer.integer("maxAttempts", job.maxAttempts)
        writer.string("state", job.state.rawValue)
        writer.string("reason", job.reason)
        writer.integer("attempts", job.attempts)
        writer.integer("uncountedAttempts", job.uncountedAttempts)
        writer.integer("crashedInARow", job.crashedInARow)
        writer.integer("exitCode", job.exitCode)
        writer.date("firstStartedAt", job.firstStartedAt)
        writer.date("startedAt", job.startedAt)
        writer.date("finishedAt", job.finishedAt)
        writer.date("nextAttemptAt", job.nextAttemptAt)
        writer.date("waitingSince", job.waitingSince)
        return writer.finish()
    }

    static func encode(_ attempt: AttemptRecord) -> [UInt8] {
        var writer = ObjectWriter()
        writer.string("jobID", attempt.jobID)
        writer.string("occurrence", attempt.occurrence)
        writer.integer("number", attempt.number)
        writer.string("outcome", attempt.outcome?.rawValue)
        writer.date("startedAt", attempt.startedAt)
        writer.date("finishedAt", attempt.finishedAt)
        writer.integer("exitCode", attempt.exitCode)
        writer.integer("signal", attempt.signal)
        writer.string("reason", attempt.reason)
        writer.integer("pid", attempt.pid)
        writer.integer("pidStartTime", attempt.pidStartTime)
        writer.string("logPath", attempt.logPath)
        return writer.finish()
    }

    /// One JSON object, member by member; a nil value leaves its member out.
    struct ObjectWriter {
        private var bytes: [UInt8] = [UInt8(ascii: "{")]

        init() { bytes.reserveCapacity(320) }

        mutating func string(_ key: StaticString, _ value: String?) {
            guard let value else { return }
            member(key)
            quoted(value)
        }

        mutating func strings(_ key: StaticString, _ values: [String]) {
            member(key)
            bytes.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                quoted(value)
            }
            bytes.append(UInt8(ascii: "]"))
        }

        mutating func integer(_ key: StaticString, _ value: (some BinaryInteger)?) {
            guard let value else { return }
            member(key)
            bytes.append(contentsOf: String(value).utf8)
        }

        /// Seconds since 2001-01-01, as `JSONEncoder`'s default date strategy writes them; a
        /// Double's description is the shortest text that reads back as the same Double.
        mutating func date(_ key: StaticString, _ value: Date?) {
            guard let seconds = value?.timeIntervalSinceReferenceDate, seconds.isFinite else { return }
            member(key)
            bytes.append(contentsOf: seconds.description.utf8)
        }

        consuming func finish() -> [UInt8] {
            bytes.append(UInt8(ascii: "}"))
            return bytes
        }

        private mutating func member(_ key: StaticString) {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            key.withUTF8Buffer { bytes.append(contentsOf: $0) }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(UInt8(ascii: ":"))
        }

        /// A JSON string: quote, backslash and control characters escaped, the rest as UTF-8.
        private mutating func quoted(_ value: String) {
            bytes.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    bytes.append(UInt8(ascii: "\\"))
                    bytes.append(byte)
                case 0..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: Array("\\u00".utf8))
                    bytes.append(hex[Int(byte >> 4)])
                    bytes.append(hex[Int(byte & 0xF)])
                default:
                    bytes.append(byte)
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }
    }
}
