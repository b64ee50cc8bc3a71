import Foundation
import JobRunnerCore
import JobRunnerLMDB

extension StatusReport {
    /// `status --json` (SPEC 5.11), written out in pieces of about 256 KiB as it is made: one
    /// job per line. A job's line is made as it is written, its fixed parts from bytes made
    /// once, its dates formatted into the output: a 100,000-job run writes 100,000 lines.
    func writeJSON(_ write: ([UInt8]) -> Void) {
        let run = overview.run
        var json = JSONWriter(capacity: 1 << 10)
        func date(_ name: String, _ value: Date?) {
            guard let value else { return json.nullable(name, unescaped: nil) }
            Timestamps.withISO(value) { json.nullable(name, unescaped: $0) }
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
        forEachRow { row in
            lines.append(row, outputs: overview.outputs[row.record.jobID] ?? [:])
            if lines.bytes.count >= 256 << 10 { write(lines.drain()) }
        }
        write(lines.drain())
        json.endArray()
        json.newline()
        json.key("pipelines")
        json.beginArray()
        for row in pipelines {
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
        for record in schedules.values.sorted(by: { $0.jobID < $1.jobID }) {
            json.newline()
            json.beginObject()
            json.nullable("id", record.jobID)
            json.nullable("lastResult", record.lastResult?.rawValue)
            json.nullable("lastRun", record.lastRunID)
            date("lastScheduledAt", record.lastScheduled)
            date("nextDueAt", record.nextDue)
            json.endObject()
        }
        json.endArray()
        json.endObject()
        json.newline()
        write(json.drain())
    }
}

/// The `jobs` lines of `status --json`, byte for byte as `JSONWriter` writes such an object
/// (members in this order, `null` for an absent value, no spaces), each after a line break
/// and, but for the first, a comma.
private struct JobLines {
    private(set) var bytes: [UInt8] = []
    private var first = true
    private var dates = Timestamps.ISOWriter()

    init() { bytes.reserveCapacity(320 << 10) }

    mutating func drain() -> [UInt8] {
        defer { bytes.removeAll(keepingCapacity: true) }
        return bytes
    }

    private static let opening = Array("\n{\"id\":".utf8)
    private static let nextOpening = Array("\n,{\"id\":".utf8)
    private static let pipeline = Array(",\"pipeline\":".utf8)
    private static let state = Array(",\"state\":".utf8)
    private static let reason = Array(",\"reason\":".utf8)
    private static let attempts = Array(",\"attempts\":".utf8)
    private static let exitCode = Array(",\"exitCode\":".utf8)
    private static let startedAt = Array(",\"startedAt\":".utf8)
    private static let finishedAt = Array(",\"finishedAt\":".utf8)
    private static let nextAttemptAt = Array(",\"nextAttemptAt\":".utf8)
    private static let outputs = Array(",\"outputs\":".utf8)
    private static let null = Array("null".utf8)

    mutating func append(_ row: StatusReport.Row, outputs: [String: String]) {
        let record = row.record
        bytes.append(contentsOf: first ? Self.opening : Self.nextOpening)
        first = false
        JSONWriter.appendQuoted(record.jobID, to: &bytes)
        bytes.append(contentsOf: Self.pipeline)
        JSONWriter.appendQuoted(record.pipeline, to: &bytes)
        // A job that has not started is `waiting`, with what it waits for: with no runner at
        // work the table shows its stored state, `pending` with no reason, which for JSON is
        // `waiting` for a `slot` (the next runner's).
        let open = row.state == .pending || row.state == .waiting
        bytes.append(contentsOf: Self.state)
        JSONWriter.appendQuoted(open ? JobState.waiting.rawValue : row.state.rawValue, to: &bytes)
        bytes.append(contentsOf: Self.reason)
        if let words = row.reason?.words ?? (open ? JobReason.waiting(.slot).words : nil) {
            JSONWriter.appendQuoted(words, to: &bytes)
        } else {
            bytes.append(contentsOf: Self.null)
        }
        bytes.append(contentsOf: Self.attempts)
        integer(record.attempts)
        bytes.append(contentsOf: Self.exitCode)
        if let code = record.exitCode { integer(Int(code)) } else { bytes.append(contentsOf: Self.null) }
        bytes.append(contentsOf: Self.startedAt)
        date(record.startedAt)
        bytes.append(contentsOf: Self.finishedAt)
        date(record.finishedAt)
        bytes.append(contentsOf: Self.nextAttemptAt)
        date(record.nextAttemptAt)
        bytes.append(contentsOf: Self.outputs)
        bytes.append(UInt8(ascii: "{"))
        for (index, name) in outputs.keys.sorted().enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONWriter.appendQuoted(name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            JSONWriter.appendQuoted(outputs[name] ?? "", to: &bytes)
        }
        bytes.append(contentsOf: "}}".utf8)
    }

    private mutating func integer(_ value: Int) {
        if (0..<10).contains(value) {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
        } else {
            bytes.append(contentsOf: String(value).utf8)
        }
    }

    private mutating func date(_ value: Date?) {
        guard let value else { return bytes.append(contentsOf: Self.null) }
        bytes.append(UInt8(ascii: "\""))
        dates.append(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }
}
