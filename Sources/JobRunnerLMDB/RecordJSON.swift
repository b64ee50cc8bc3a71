import Foundation
import JobRunnerCore

/// The JSON of the two records written on every transition, written directly.
///
/// Every attempt writes a job record and an attempt record when it starts and again when it
/// ends; with `JSONEncoder` those four encodings were a fifth of the runner's time on 20,000
/// no-op plugin jobs. The members are those of the records' `Codable` conformances, so
/// `JSONDecoder` reads them back unchanged and older states stay readable.
///
/// A job record leaves out the members that hold their default (an empty occurrence, no needs,
/// no uncounted attempts, no crashes in a row), as it leaves out absent optionals: every reader
/// of schema 1, `JSONDecoder` included, reads a missing one as its default. The row is then
/// a fifth smaller, so more of them fit a page of the B-tree and a commit copies fewer.
enum RecordJSON {
    static func encode(_ job: JobRecord) -> [UInt8] {
        var row = RowWriter(capacity: 256)
        encode(job, into: &row)
        return row.bytes
    }

    static func encode(_ attempt: AttemptRecord) -> [UInt8] {
        var row = RowWriter(capacity: 256)
        encode(attempt, into: &row)
        return row.bytes
    }

    /// Writes `job`'s row into `row`, after what it holds (the store's writer reuses one).
    static func encode(_ job: JobRecord, into row: inout RowWriter) {
        row.literal(#"{"jobID":"#)
        row.string(job.jobID)
        if !job.occurrence.isEmpty {
            row.literal(#","occurrence":"#)
            row.string(job.occurrence)
        }
        row.literal(#","pipeline":"#)
        row.string(job.pipeline)
        if !job.needs.isEmpty {
            row.literal(#","needs":["#)
            for (index, need) in job.needs.enumerated() {
                if index > 0 { row.literal(",") }
                row.string(need)
            }
            row.literal("]")
        }
        row.member(#","maxAttempts":"#, job.maxAttempts)
        row.literal(#","state":"#)
        row.string(job.state.rawValue)
        row.member(#","reason":"#, job.reason?.words)
        row.literal(#","attempts":"#)
        row.integer(job.attempts)
        if job.uncountedAttempts != 0 { row.member(#","uncountedAttempts":"#, job.uncountedAttempts) }
        if job.crashedInARow != 0 { row.member(#","crashedInARow":"#, job.crashedInARow) }
        row.member(#","exitCode":"#, job.exitCode)
        row.member(#","firstStartedAt":"#, job.firstStartedAt)
        row.member(#","startedAt":"#, job.startedAt)
        row.member(#","finishedAt":"#, job.finishedAt)
        row.member(#","nextAttemptAt":"#, job.nextAttemptAt)
        row.member(#","waitingSince":"#, job.waitingSince)
        if job.allowFailure { row.literal(#","allowFailure":true"#) }
        if job.when != .success { row.member(#","when":"#, job.when.rawValue) }
        row.literal("}")
    }

    /// Writes `attempt`'s row into `row`, after what it holds. Every member is written as
    /// `JSONEncoder` writes it (the occurrence too: readers older than ``decodeAttempt(_:)``
    /// need it).
    static func encode(_ attempt: AttemptRecord, into row: inout RowWriter) {
        row.literal(#"{"jobID":"#)
        row.string(attempt.jobID)
        row.literal(#","occurrence":"#)
        row.string(attempt.occurrence)
        row.literal(#","number":"#)
        row.integer(attempt.number)
        row.member(#","outcome":"#, attempt.outcome?.rawValue)
        row.member(#","startedAt":"#, attempt.startedAt)
        row.member(#","finishedAt":"#, attempt.finishedAt)
        row.member(#","exitCode":"#, attempt.exitCode)
        row.member(#","signal":"#, attempt.signal)
        row.member(#","reason":"#, attempt.reason)
        row.member(#","pid":"#, attempt.pid)
        row.member(#","pidStartTime":"#, attempt.pidStartTime)
        row.member(#","logPath":"#, attempt.logPath)
        row.literal("}")
    }

    /// A run record: a 100,000-job run's holds 100,000 ids, written when the run opens, is
    /// resumed and ends.
    static func encode(_ run: RunRecord) -> [UInt8] {
        var writer = JSONWriter(capacity: 160 + run.jobIDs.reduce(0) { $0 + $1.utf8.count + 3 })
        writer.beginObject()
        writer.member("id", run.id)
        writer.member("state", run.state.rawValue)
        writer.member("startedAt", run.startedAt)
        writer.member("finishedAt", run.finishedAt)
        writer.member("jobIDs", run.jobIDs)
        writer.member("runnerPID", run.runnerPID)
        writer.key("pipelineLimits")
        writer.beginObject()
        for name in run.pipelineLimits.keys.sorted() { writer.member(name, run.pipelineLimits[name]) }
        writer.endObject()
        writer.member("occurrenceOf", run.occurrenceOf)
        writer.member("scheduledAt", run.scheduledAt)
        writer.endObject()
        return writer.bytes
    }
}

/// The bytes of one flat record: each member's name, with its comma, quotes and colon, is
/// written as one literal, and values as ``JSONWriter`` writes them (strings escaped alike,
/// numbers as digits, dates as seconds since the reference date).
struct RowWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// Forgets the row, keeping the room: the next row is written into the same bytes.
    mutating func clear() { bytes.removeAll(keepingCapacity: true) }

    /// Text written as it is (a member's name, a bracket): it must need no escape.
    mutating func literal(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func string(_ value: String) { JSONWriter.appendQuoted(value, to: &bytes) }

    /// As `JSONWriter.integer` writes one. Generic here, so that the compiler specializes the
    /// conversion for each integer type a row holds (a generic call into another module goes
    /// through the type's witness tables); the digits are written by the one shared routine.
    mutating func integer(_ value: some BinaryInteger) {
        guard let value = Int64(exactly: value) else { return bytes.append(contentsOf: String(value).utf8) }
        JSONWriter.appendDecimal(value, to: &bytes)
    }

    /// A member named by `name` (`,"name":`), left out when `value` is nil.
    mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        literal(name)
        string(value)
    }

    mutating func member(_ name: StaticString, _ value: (some BinaryInteger)?) {
        guard let value else { return }
        literal(name)
        integer(value)
    }

    /// A date as seconds since the reference date, in the shortest text that reads back as the
    /// same `Double` (JSON has no infinity or NaN: those are written as null).
    mutating func member(_ name: StaticString, _ value: Date?) {
        guard let value else { return }
        literal(name)
        let seconds = value.timeIntervalSinceReferenceDate
        bytes.append(contentsOf: (seconds.isFinite ? seconds.description : "null").utf8)
    }
}
