import Foundation
import JobRunnerJSON

/// `status --json` (SPEC 5.11) of a run, for `status --json` and `GET /api/v1/status`: one
/// code path for both.
public enum StatusJSON {
    /// Writes the document of `view` in pieces of about 256 KiB as it is made: one job per
    /// line. A job's line is made as it is written, its fixed parts literals, its dates
    /// formatted into the output: a 100,000-job run writes 100,000 lines.
    public static func write(_ view: RunView, _ write: ([UInt8]) -> Void) {
        let overview = view.overview
        let run = overview.run
        var json = JSONWriter(capacity: 1 << 10)
        func date(_ name: String, _ value: Date?) {
            guard let value else { return json.nullable(name, unescaped: nil) }
            ISOTimestamp.withISO(value) { json.nullable(name, unescaped: $0) }
        }
        json.beginObject()
        json.key("run")
        json.beginObject()
        json.nullable("id", run.id)
        json.nullable("state", run.state.rawValue)
        date("startedAt", run.startedAt)
        date("finishedAt", run.finishedAt)
        json.endObject()
        json.newline()
        json.key("jobs")
        json.beginArray()
        write(json.drain())
        var lines = JobLines()
        view.forEachJob { job in
            lines.append(job, outputs: overview.outputs[job.record.jobID] ?? [:])
            if lines.count >= 256 << 10 { write(lines.drain()) }
        }
        write(lines.drain())
        json.endArray()
        json.newline()
        json.key("pipelines")
        json.beginArray()
        for row in view.pipelines {
            json.beginObject()
            json.nullable("name", row.name)
            json.nullable("maxConcurrent", row.maxConcurrent)
            json.nullable("suspended", row.suspended)
            json.nullable("running", row.running)
            json.endObject()
        }
        json.endArray()
        json.newline()
        json.key("periodic")
        json.beginArray()
        for record in view.schedules.values.sorted(by: { $0.jobID < $1.jobID }) {
            json.newline()
            json.beginObject()
            json.nullable("id", record.jobID)
            json.nullable("lastResult", record.lastResult?.rawValue)
            json.nullable("lastRun", record.lastRunID)
            date("lastScheduledAt", record.lastScheduled)
            date("nextDueAt", record.nextDue)
            json.key("underWay")
            if let occurrence = view.underWay[record.jobID] {
                json.beginObject()
                json.nullable("run", occurrence.runID)
                date("scheduledAt", occurrence.scheduledAt)
                json.member("manual", occurrence.manual)
                json.nullable("state", (occurrence.job?.state ?? .waiting).rawValue)
                // With no run yet, it is queued (behind the running one, or for its needs).
                let reason = occurrence.job == nil ? "queued" : occurrence.job?.reason?.words
                json.nullable("reason", reason)
                json.nullable("attempts", occurrence.job?.record.attempts ?? 0)
                json.endObject()
            } else {
                json.null()
            }
            json.endObject()
        }
        json.endArray()
        json.newline()
        // Requests stored for a runner that has not taken them (none works, or it is about to).
        json.key("pendingRequests")
        json.beginArray()
        for request in view.pendingRequests {
            json.beginObject()
            json.nullable("kind", request.kind.rawValue)
            json.nullable("job", request.jobID)
            json.nullable("run", request.runID)
            date("requestedAt", request.requestedAt)
            json.endObject()
        }
        json.endArray()
        json.newline()
        // Whether a runner works on the state directory: periodic jobs fire only then.
        json.nullable("runnerPID", view.runnerPID)
        json.endObject()
        json.newline()
        write(json.drain())
    }
}

/// The `jobs` lines of `status --json`, byte for byte as the structured ``JSONWriter`` API
/// writes such an object (members in this order, `null` for an absent value, no spaces), each
/// after a line break and, but for the first, a comma; written with its literal API.
private struct JobLines {
    private var json = JSONWriter(capacity: 320 << 10)
    private var first = true
    private var dates = ISOTimestamp.Writer()

    /// How many bytes wait.
    var count: Int { json.count }

    mutating func drain() -> [UInt8] { json.drain() }

    mutating func append(_ row: RunView.Job, outputs: [String: String]) {
        let record = row.record
        if first { json.raw("\n{\"id\":") } else { json.raw("\n,{\"id\":") }
        first = false
        json.string(record.jobID)
        json.member(raw: #","pipeline":"#, record.pipeline)
        // A job that has not started is `waiting`, with what it waits for: with no runner at
        // work the table shows its stored state, `pending` with no reason, which for JSON is
        // `waiting` for a `slot` (the next runner's).
        let open = row.state == .pending || row.state == .waiting
        json.member(raw: #","state":"#, open ? JobState.waiting.rawValue : row.state.rawValue)
        json.raw(#","reason":"#)
        if let words = row.reason?.words ?? (open ? JobReason.waiting(.slot).words : nil) {
            json.string(words)
        } else {
            json.raw("null")
        }
        json.member(raw: #","attempts":"#, record.attempts)
        json.raw(#","exitCode":"#)
        if let code = record.exitCode { json.integer(code) } else { json.raw("null") }
        json.raw(#","startedAt":"#)
        date(record.startedAt)
        json.raw(#","finishedAt":"#)
        date(record.finishedAt)
        json.raw(#","nextAttemptAt":"#)
        date(record.nextAttemptAt)
        json.raw(#","outputs":"#)
        json.object(outputs)
        json.raw("}")
    }

    /// A date in ISO 8601 between quotes, or `null`.
    private mutating func date(_ value: Date?) {
        guard let value else { return json.raw("null") }
        var dates = self.dates
        json.withRawBytes { bytes in
            bytes.append(UInt8(ascii: "\""))
            dates.append(value, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        }
        self.dates = dates
    }
}
