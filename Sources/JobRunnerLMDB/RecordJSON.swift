import Foundation
import JobRunnerCore

/// The JSON of the two records written on every transition, written directly.
///
/// Every attempt writes a job record and an attempt record when it starts and again when it
/// ends; with `JSONEncoder` those four encodings were a fifth of the runner's time on 20,000
/// no-op plugin jobs. The members are those of the synthesized `Codable` conformances, so
/// `JSONDecoder` reads them back unchanged and older states stay readable.
enum RecordJSON {
    static func encode(_ job: JobRecord) -> [UInt8] {
        var writer = JSONWriter(capacity: 320)
        writer.beginObject()
        writer.member("jobID", job.jobID)
        writer.member("occurrence", job.occurrence)
        writer.member("pipeline", job.pipeline)
        writer.member("needs", job.needs)
        writer.member("maxAttempts", job.maxAttempts)
        writer.member("state", job.state.rawValue)
        writer.member("reason", job.reason?.words)
        writer.member("attempts", job.attempts)
        writer.member("uncountedAttempts", job.uncountedAttempts)
        writer.member("crashedInARow", job.crashedInARow)
        writer.member("exitCode", job.exitCode)
        writer.member("firstStartedAt", job.firstStartedAt)
        writer.member("startedAt", job.startedAt)
        writer.member("finishedAt", job.finishedAt)
        writer.member("nextAttemptAt", job.nextAttemptAt)
        writer.member("waitingSince", job.waitingSince)
        if job.allowFailure { writer.member("allowFailure", true) }
        if job.when != .success { writer.member("when", job.when.rawValue) }
        writer.endObject()
        return writer.bytes
    }

    static func encode(_ attempt: AttemptRecord) -> [UInt8] {
        var writer = JSONWriter(capacity: 320)
        writer.beginObject()
        writer.member("jobID", attempt.jobID)
        writer.member("occurrence", attempt.occurrence)
        writer.member("number", attempt.number)
        writer.member("outcome", attempt.outcome?.rawValue)
        writer.member("startedAt", attempt.startedAt)
        writer.member("finishedAt", attempt.finishedAt)
        writer.member("exitCode", attempt.exitCode)
        writer.member("signal", attempt.signal)
        writer.member("reason", attempt.reason)
        writer.member("pid", attempt.pid)
        writer.member("pidStartTime", attempt.pidStartTime)
        writer.member("logPath", attempt.logPath)
        writer.endObject()
        return writer.bytes
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
