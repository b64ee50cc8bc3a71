import Foundation
import JobRunnerCore
import JobRunnerJSON

/// The JSON of the store's records, written directly with ``JSONWriter``.
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
///
/// The records the store once wrote with `JSONEncoder` (schedules, pipelines, operator
/// requests, outputs) are written as it wrote them (``JSONWriter/Style/foundation``), members in
/// key order: it wrote them in a dictionary's order, which differs from one encoding to the next,
/// so these bytes are those of `JSONEncoder` with `.sortedKeys`.
enum RecordJSON {
    static func encode(_ job: JobRecord) -> [UInt8] {
        var row = JSONWriter(capacity: 256)
        encode(job, into: &row)
        return row.bytes
    }

    static func encode(_ attempt: AttemptRecord) -> [UInt8] {
        var row = JSONWriter(capacity: 256)
        encode(attempt, into: &row)
        return row.bytes
    }

    /// Writes `job`'s row into `row`, after what it holds (the store's writer reuses one).
    static func encode(_ job: JobRecord, into row: inout JSONWriter) {
        row.raw(#"{"jobID":"#)
        row.string(job.jobID)
        if !job.occurrence.isEmpty { row.member(raw: #","occurrence":"#, job.occurrence) }
        row.member(raw: #","pipeline":"#, job.pipeline)
        if !job.needs.isEmpty {
            row.raw(#","needs":["#)
            for (index, need) in job.needs.enumerated() {
                if index > 0 { row.raw(",") }
                row.string(need)
            }
            row.raw("]")
        }
        row.member(raw: #","maxAttempts":"#, job.maxAttempts)
        row.member(raw: #","state":"#, job.state.rawValue)
        row.member(raw: #","reason":"#, job.reason?.words)
        row.member(raw: #","attempts":"#, job.attempts)
        if job.uncountedAttempts != 0 { row.member(raw: #","uncountedAttempts":"#, job.uncountedAttempts) }
        if job.crashedInARow != 0 { row.member(raw: #","crashedInARow":"#, job.crashedInARow) }
        row.member(raw: #","exitCode":"#, job.exitCode)
        row.member(raw: #","firstStartedAt":"#, job.firstStartedAt)
        row.member(raw: #","startedAt":"#, job.startedAt)
        row.member(raw: #","finishedAt":"#, job.finishedAt)
        row.member(raw: #","nextAttemptAt":"#, job.nextAttemptAt)
        row.member(raw: #","waitingSince":"#, job.waitingSince)
        if job.allowFailure { row.raw(#","allowFailure":true"#) }
        if job.when != .success { row.member(raw: #","when":"#, job.when.rawValue) }
        row.member(raw: #","logProblem":"#, job.logProblem)
        row.raw("}")
    }

    /// Writes `attempt`'s row into `row`, after what it holds. Every member is written as
    /// `JSONEncoder` writes it (the occurrence too: readers older than ``decodeAttempt(_:)``
    /// need it).
    static func encode(_ attempt: AttemptRecord, into row: inout JSONWriter) {
        row.raw(#"{"jobID":"#)
        row.string(attempt.jobID)
        row.member(raw: #","occurrence":"#, attempt.occurrence)
        row.member(raw: #","number":"#, attempt.number)
        row.member(raw: #","outcome":"#, attempt.outcome?.rawValue)
        row.member(raw: #","startedAt":"#, attempt.startedAt)
        row.member(raw: #","finishedAt":"#, attempt.finishedAt)
        row.member(raw: #","exitCode":"#, attempt.exitCode)
        row.member(raw: #","signal":"#, attempt.signal)
        row.member(raw: #","reason":"#, attempt.reason)
        row.member(raw: #","pid":"#, attempt.pid)
        row.member(raw: #","pidStartTime":"#, attempt.pidStartTime)
        row.member(raw: #","logPath":"#, attempt.logPath)
        row.member(raw: #","logProblem":"#, attempt.logProblem)
        row.raw("}")
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
        if let manual = run.manual { writer.member("manual", manual) }
        writer.endObject()
        return writer.bytes
    }

    /// A periodic job's schedule record, as `JSONEncoder` wrote it but members in key order (it
    /// wrote them in a dictionary's order, which differs from one record to the next).
    static func encode(_ schedule: ScheduleRecord) -> [UInt8] {
        var writer = JSONWriter(capacity: 192, style: .foundation)
        writer.beginObject()
        writer.member("anchor", schedule.anchor)
        writer.key("backlog")
        writer.beginArray()
        for date in schedule.backlog { writer.date(date) }
        writer.endArray()
        writer.member("jobID", schedule.jobID)
        writer.member("lastResult", schedule.lastResult?.rawValue)
        writer.member("lastRunID", schedule.lastRunID)
        writer.member("lastScheduled", schedule.lastScheduled)
        writer.member("nextDue", schedule.nextDue)
        writer.member("overlap", schedule.overlap?.rawValue)
        writer.member("queued", schedule.queued)
        writer.member("schedule", schedule.schedule)
        writer.key("triggered")
        writer.beginArray()
        for date in schedule.triggered { writer.date(date) }
        writer.endArray()
        writer.endObject()
        return writer.bytes
    }

    /// A pipeline's record, as `JSONEncoder` wrote it, members in key order.
    static func encode(_ pipeline: PipelineRecord) -> [UInt8] {
        var writer = JSONWriter(capacity: 48, style: .foundation)
        writer.beginObject()
        writer.member("name", pipeline.name)
        writer.member("suspended", pipeline.suspended)
        writer.endObject()
        return writer.bytes
    }

    /// An operator's request, as `JSONEncoder` wrote it, members in key order.
    static func encode(_ request: OperatorRequest) -> [UInt8] {
        var writer = JSONWriter(capacity: 96, style: .foundation)
        writer.beginObject()
        writer.member("id", request.id)
        writer.member("jobID", request.jobID)
        writer.member("kind", request.kind.rawValue)
        writer.member("requestedAt", request.requestedAt)
        if let runID = request.runID { writer.member("runID", runID) }
        writer.endObject()
        return writer.bytes
    }

    /// A job's outputs, as `JSONEncoder` wrote them but in key order (it wrote them in a
    /// dictionary's order, which differs from process to process).
    static func encode(outputs: [String: String]) -> [UInt8] {
        var writer = JSONWriter(capacity: 64, style: .foundation)
        writer.object(outputs)
        return writer.bytes
    }
}
