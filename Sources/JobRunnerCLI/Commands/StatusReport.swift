import Foundation
import JobRunnerCore

/// What `status` shows about a run: each job's state in a person's words, and the pipelines.
struct StatusReport {
    struct Row {
        var record: JobRecord
        /// The state shown: a pending job that waits on something shows as `waiting`.
        var state: JobState
        var reason: JobReason?
        var words: String
    }

    struct PipelineRow {
        var name: String
        var maxConcurrent: Int
        var suspended: Int
        var running: Int
    }

    var snapshot: RunSnapshot
    var rows: [Row]
    var pipelines: [PipelineRow]
    /// Whether a runner holds the state directory now.
    var runnerPID: Int32?
    /// The periodic jobs' schedule records, by job id (SPEC 5.8).
    var schedules: [String: ScheduleRecord] = [:]

    init(snapshot: RunSnapshot, suspended: [String: PipelineRecord], runnerPID: Int32?) {
        self.snapshot = snapshot
        self.runnerPID = runnerPID
        let jobs = snapshot.jobs
        var running: [String: Int] = [:]
        for record in jobs.values where record.state == .running { running[record.pipeline, default: 0] += 1 }
        // Pipelines the run's jobs use, and declared ones; not the implicit `default` when no
        // job is in it.
        var names = Set(jobs.values.map(\.pipeline)).union(snapshot.run.pipelineLimits.keys)
        if !jobs.values.contains(where: { $0.pipeline == PipelineDefinition.defaultName })
            && (suspended[PipelineDefinition.defaultName]?.suspended ?? 0) == 0
        {
            names.remove(PipelineDefinition.defaultName)
        }
        pipelines = names.sorted().map { name in
            PipelineRow(
                name: name,
                maxConcurrent: snapshot.run.pipelineLimits[name] ?? PipelineDefinition.defaultMaxConcurrent,
                suspended: suspended[name]?.suspended ?? 0, running: running[name] ?? 0)
        }
        let order = snapshot.run.jobIDs
        // A run no runner works on does not wait for slots: its open jobs start at the next `run`.
        let idle = snapshot.run.state == .stopped || (snapshot.run.state == .running && runnerPID == nil)
        rows = order.compactMap { id in
            guard let record = jobs[id] else { return nil }
            return Self.row(
                for: record, jobs: jobs, suspended: suspended[record.pipeline]?.suspended ?? 0, idle: idle)
        }
    }

    private static func row(for record: JobRecord, jobs: [String: JobRecord], suspended: Int, idle: Bool)
        -> Row
    {
        switch record.state {
        case .pending, .waiting:
            let reason = waitingReason(of: record, jobs: jobs, suspended: suspended)
            if idle && reason == .slot {
                return Row(
                    record: record, state: record.state, reason: record.reason,
                    words: "\(record.state.rawValue); runs at the next `jobrunner run`")
            }
            return Row(
                record: record, state: .waiting, reason: .waiting(reason),
                words: words(for: reason, record: record, jobs: jobs))
        case .running:
            let since = record.startedAt.map { " since \(Timestamps.moment($0))" } ?? ""
            return Row(
                record: record, state: .running, reason: nil, words: "attempt \(record.attempts)\(since)")
        case .succeeded:
            return Row(record: record, state: .succeeded, reason: nil, words: duration(record))
        case .failed:
            let attempts = "\(record.attempts) attempt\(record.attempts == 1 ? "" : "s")"
            let allowed = record.isAllowedFailure ? "failed (allowed): " : ""
            return Row(
                record: record, state: .failed, reason: record.reason,
                words: "\(allowed)\(record.reason?.words ?? "failed") after \(attempts)")
        case .skipped, .blocked, .cancelled:
            return Row(
                record: record, state: record.state, reason: record.reason, words: record.reason?.words ?? "")
        }
    }

    /// What a job that is not running nor final waits for now: an unmet need first, then what
    /// its record says, then its pipeline's suspension, else a slot.
    private static func waitingReason(of record: JobRecord, jobs: [String: JobRecord], suspended: Int)
        -> WaitingReason
    {
        if let need = record.needs.first(where: { need in
            jobs[need].map { record.when.waitsForFinalNeeds ? $0.state.isFinal : $0.satisfiesNeeds } != true
        }) {
            return .needs(need)
        }
        switch record.waitingReason {
        case .backoff where record.nextAttemptAt != nil: return .backoff
        case .constraint(let name): return .constraint(name)
        case .internet: return .internet
        default: break
        }
        if suspended > 0 { return .suspended }
        if record.waitingReason == .interrupted { return .interrupted }
        return .slot
    }

    private static func words(for reason: WaitingReason, record: JobRecord, jobs: [String: JobRecord])
        -> String
    {
        let since = record.waitingSince.map { " since \(Timestamps.moment($0))" } ?? ""
        switch reason {
        case .needs(let need):
            return "waiting for \(need) (\(jobs[need]?.state.rawValue ?? "unknown"))"
        case .backoff:
            let next = record.nextAttemptAt.map { Timestamps.moment($0) } ?? "?"
            let of = record.maxAttempts.map { " of \($0)" } ?? ""
            return "backoff until \(next) (attempt \(record.attempts + 1)\(of))"
        case .constraint(let name):
            return "waiting for constraint \(name)\(since)"
        case .internet:
            return "waiting for internet\(since)"
        case .suspended:
            return "suspended pipeline \(record.pipeline)"
        case .interrupted:
            return "interrupted; starts again on the next run"
        case .slot:
            return "waiting for a slot in pipeline \(record.pipeline)"
        case .schedule:
            return "waiting for its next scheduled date"
        }
    }

    private static func duration(_ record: JobRecord) -> String {
        guard let start = record.startedAt, let end = record.finishedAt else { return "" }
        return "took \(Timestamps.elapsed(end.timeIntervalSince(start)))"
    }

    /// The human-readable table.
    func table() -> String {
        let run = snapshot.run
        var lines: [String] = []
        var head = "run \(run.id)  \(run.state.rawValue)  started \(Timestamps.moment(run.startedAt))"
        if let finished = run.finishedAt { head += "  finished \(Timestamps.moment(finished))" }
        if let runnerPID {
            head += "  (runner pid \(runnerPID))"
        } else if run.state == .running {
            head += "  (no runner: the next `jobrunner run` resumes it)"
        }
        lines.append(head)
        let columns = ["JOB", "PIPELINE", "STATE", "ATTEMPTS", "DETAIL"]
        let cells = rows.map { row in
            [
                row.record.jobID, row.record.pipeline, row.state.rawValue, String(row.record.attempts),
                row.words,
            ]
        }
        var widths = columns.map(\.count)
        for cell in cells {
            for (index, text) in cell.enumerated() { widths[index] = max(widths[index], text.count) }
        }
        func format(_ cell: [String]) -> String {
            cell.enumerated().map { index, text in
                index == cell.count - 1
                    ? text : text.padding(toLength: widths[index] + 2, withPad: " ", startingAt: 0)
            }.joined().trimmingCharacters(in: .whitespaces)
        }
        lines.append(format(columns))
        lines.append(contentsOf: cells.map(format))
        let pipelineText = pipelines.map { row in
            let limit = row.maxConcurrent == 0 ? "∞" : String(row.maxConcurrent)
            return "\(row.name) \(row.running)/\(limit) running"
                + (row.suspended > 0 ? ", suspended: \(row.suspended)" : "")
        }
        lines.append("pipelines: " + pipelineText.joined(separator: "; "))
        if !schedules.isEmpty {
            lines.append("periodic jobs:")
            for record in schedules.values.sorted(by: { $0.jobID < $1.jobID }) {
                let last =
                    record.lastResult.map { "last \($0.rawValue) (run \(record.lastRunID ?? "?"))" }
                    ?? "no occurrence finished yet"
                let next = record.nextDue.map { "next due \(Timestamps.moment($0))" } ?? "no next date"
                lines.append("  \(record.jobID): \(last); \(next)")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `status --json` (SPEC 5.11).
    func json() -> String {
        func date(_ value: Date?) -> String { value.map { JSONValue.quote(Timestamps.iso($0)) } ?? "null" }
        func string(_ value: String?) -> String { value.map(JSONValue.quote) ?? "null" }
        let run = snapshot.run
        let runJSON =
            "{\"id\": \(JSONValue.quote(run.id)), \"state\": \(JSONValue.quote(run.state.rawValue)), "
            + "\"startedAt\": \(date(run.startedAt)), \"finishedAt\": \(date(run.finishedAt))}"
        let jobs = rows.map { row -> String in
            let record = row.record
            let outputs = (snapshot.outputs[record.jobID] ?? [:]).mapValues(JSONValue.string)
            return
                "{\"id\": \(JSONValue.quote(record.jobID)), \"pipeline\": \(JSONValue.quote(record.pipeline)), "
                + "\"state\": \(JSONValue.quote(row.state.rawValue)), \"reason\": \(string(row.reason?.words)), "
                + "\"attempts\": \(record.attempts), \"exitCode\": \(record.exitCode.map(String.init) ?? "null"), "
                + "\"startedAt\": \(date(record.startedAt)), \"finishedAt\": \(date(record.finishedAt)), "
                + "\"nextAttemptAt\": \(date(record.nextAttemptAt)), \"outputs\": \(JSONValue.object(outputs).jsonText)}"
        }
        let pipelineJSON = pipelines.map { row in
            "{\"name\": \(JSONValue.quote(row.name)), \"maxConcurrent\": \(row.maxConcurrent), "
                + "\"suspended\": \(row.suspended), \"running\": \(row.running)}"
        }
        let periodicJSON = schedules.values.sorted(by: { $0.jobID < $1.jobID }).map { record in
            "{\"id\": \(JSONValue.quote(record.jobID)), \"lastResult\": \(string(record.lastResult?.rawValue)), "
                + "\"lastRun\": \(string(record.lastRunID)), \"lastScheduledAt\": \(date(record.lastScheduled)), "
                + "\"nextDueAt\": \(date(record.nextDue))}"
        }
        return "{\"run\": \(runJSON),\n \"jobs\": [" + jobs.joined(separator: ",\n  ")
            + "],\n \"pipelines\": ["
            + pipelineJSON.joined(separator: ", ") + "],\n \"periodic\": ["
            + periodicJSON.joined(separator: ",\n  ")
            + "]}"
    }
}
