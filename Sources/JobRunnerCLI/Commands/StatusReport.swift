import Foundation
import JobRunnerCore
import JobRunnerLMDB

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

    var overview: RunOverview
    var rows: [Row]
    /// Jobs not listed, by state (the succeeded ones of a big run, unless `--all`).
    var unlisted: [JobState: Int] = [:]
    var pipelines: [PipelineRow]
    /// Whether a runner holds the state directory now.
    var runnerPID: Int32?
    /// Whether a newer run replaced this one as the current run (`run --new`, or other jobs
    /// loaded): no runner resumes it then.
    var replaced = false
    /// The periodic jobs' schedule records, by job id (SPEC 5.8).
    var schedules: [String: ScheduleRecord] = [:]
    /// Each pipeline's suspension count, from its record.
    private let suspensions: [String: Int]
    /// Whether no runner works on the run, so that its open jobs wait for the next `run`.
    private let idle: Bool
    /// Whether rows put their state into words.
    private let describing: Bool

    /// Runs with more jobs than this list only the jobs that did not succeed, unless `--all`.
    static let fullListLimit = 100

    /// Which jobs `status` reads whole and lists: all of them in a run of up to
    /// ``fullListLimit`` jobs or with `all`, else those that did not succeed.
    static func lists(_ state: JobState, jobCount: Int, all: Bool) -> Bool {
        all || jobCount <= fullListLimit || state != .succeeded
    }

    /// - Parameter describing: whether to make the table's rows, with each state put into
    ///   words; JSON makes its rows as it writes them (``forEachRow(_:)``).
    init(
        overview: RunOverview, suspended: [String: PipelineRecord], runnerPID: Int32?, describing: Bool = true
    ) {
        self.overview = overview
        self.runnerPID = runnerPID
        let jobs = overview.jobs
        // Pipelines the run's jobs use, with their running jobs, in one pass over the records;
        // and declared ones; not the implicit `default` when no job is in it.
        var running: [String: Int] = [:]
        for record in jobs.values {
            running[record.pipeline, default: 0] += record.state == .running ? 1 : 0
        }
        var names = Set(running.keys).union(overview.run.pipelineLimits.keys)
        if running[PipelineDefinition.defaultName] == nil
            && (suspended[PipelineDefinition.defaultName]?.suspended ?? 0) == 0
        {
            names.remove(PipelineDefinition.defaultName)
        }
        pipelines = names.sorted().map { name in
            PipelineRow(
                name: name,
                maxConcurrent: overview.run.pipelineLimits[name] ?? PipelineDefinition.defaultMaxConcurrent,
                suspended: suspended[name]?.suspended ?? 0, running: running[name] ?? 0)
        }
        // A run no runner works on does not wait for slots: its open jobs start at the next `run`.
        idle = overview.run.state == .stopped || (overview.run.state == .running && runnerPID == nil)
        suspensions = suspended.mapValues(\.suspended)
        self.describing = describing
        rows = []
        guard describing else { return }
        var rows: [Row] = []
        rows.reserveCapacity(jobs.count)
        forEachRow { rows.append($0) }
        // Counted by position, not in a dictionary: a state hashes its name. `isEmpty` first: a
        // big finished run lists no job, and a lookup hashes the id.
        var counts = [Int](repeating: 0, count: JobState.allCases.count)
        for id in overview.run.jobIDs where jobs.isEmpty || jobs[id] == nil {
            if let state = overview.states[id], let index = JobState.allCases.firstIndex(of: state) {
                counts[index] += 1
            }
        }
        self.rows = rows
        for (index, state) in JobState.allCases.enumerated() where counts[index] > 0 {
            unlisted[state] = counts[index]
        }
    }

    /// Calls `body` with the row of each listed job, in the run's order, each state put into
    /// words when the report is `describing`.
    func forEachRow(_ body: (Row) -> Void) {
        let jobs = overview.jobs
        for id in overview.run.jobIDs {
            guard let record = jobs[id] else { continue }
            body(
                Self.row(
                    for: record, jobs: jobs, states: overview.states,
                    suspended: suspensions[record.pipeline] ?? 0, idle: idle, describing: describing))
        }
    }

    private static func row(
        for record: JobRecord, jobs: [String: JobRecord], states: [String: JobState], suspended: Int,
        idle: Bool,
        describing: Bool
    ) -> Row {
        var row: Row
        switch record.state {
        case .pending, .waiting:
            let reason = waitingReason(of: record, jobs: jobs, states: states, suspended: suspended)
            if idle && reason == .slot {
                return Row(
                    record: record, state: record.state, reason: record.reason,
                    words: "\(record.state.rawValue); runs at the next `jobrunner run`")
            }
            row = Row(record: record, state: .waiting, reason: .waiting(reason), words: "")
            if describing { row.words = words(for: reason, record: record, states: states) }
        default:
            row = Row(
                record: record, state: record.state, reason: record.state == .running ? nil : record.reason,
                words: "")
            if describing { row.words = words(forFinalOrRunning: record) }
        }
        return row
    }

    /// The `DETAIL` of a running or final job.
    private static func words(forFinalOrRunning record: JobRecord) -> String {
        switch record.state {
        case .running:
            let since = record.startedAt.map { " since \(Timestamps.moment($0))" } ?? ""
            return "attempt \(record.attempts)\(since)"
        case .succeeded:
            return duration(record)
        case .failed:
            let attempts = "\(record.attempts) attempt\(record.attempts == 1 ? "" : "s")"
            let allowed = record.isAllowedFailure ? "failed (allowed): " : ""
            // "(2 attempts)": a reason may end in "after 500ms" already.
            return "\(allowed)\(record.reason?.words ?? "failed") (\(attempts))"
        case .skipped, .blocked, .cancelled, .pending, .waiting:
            return record.reason?.words ?? ""
        }
    }

    /// What a job that is not running nor final waits for now: an unmet need first, then what
    /// its record says, then its pipeline's suspension, else a slot.
    private static func waitingReason(
        of record: JobRecord, jobs: [String: JobRecord], states: [String: JobState], suspended: Int
    ) -> WaitingReason {
        // A need is met when it succeeded or was skipped (or failed with `allowFailure`, which
        // only its record says); for a `when: failure|always` job, once it is final.
        if let need = record.needs.first(where: { need in
            guard let state = states[need] else { return true }
            if record.when.waitsForFinalNeeds { return !state.isFinal }
            return !(jobs[need]?.satisfiesNeeds ?? state.satisfiesNeeds)
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

    private static func words(for reason: WaitingReason, record: JobRecord, states: [String: JobState])
        -> String
    {
        let since = record.waitingSince.map { " since \(Timestamps.moment($0))" } ?? ""
        switch reason {
        case .needs(let need):
            return "waiting for \(need) (\(states[need]?.rawValue ?? "unknown"))"
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
        let run = overview.run
        var lines: [String] = []
        var head = "run \(run.id)  \(run.state.rawValue)  started \(Timestamps.moment(run.startedAt))"
        if let finished = run.finishedAt { head += "  finished \(Timestamps.moment(finished))" }
        if let runnerPID {
            head += "  (runner pid \(runnerPID))"
        } else if !run.state.isFinal {
            head +=
                replaced
                ? "  (no runner: a newer run replaced it)"
                : "  (no runner: the next `jobrunner run` resumes it)"
        }
        lines.append(head)
        let columns = ["JOB", "PIPELINE", "STATE", "ATTEMPTS", "DETAIL"]
        // Reasons carry what jobs wrote (a skip reason, a malformed output line): escaped, so
        // that a job cannot retitle or clear the terminal of whoever reads the status.
        let cells = rows.map { row in
            [
                row.record.jobID, row.record.pipeline, row.state.rawValue, String(row.record.attempts),
                row.words,
            ].map(VisibleText.escaped)
        }
        var widths = columns.map(\.count)
        for cell in cells {
            for (index, text) in cell.enumerated() { widths[index] = max(widths[index], text.count) }
        }
        func format(_ cell: [String]) -> String {
            var line = ""
            for (index, text) in cell.enumerated() {
                line += text
                if index < cell.count - 1 {
                    line += String(repeating: " ", count: widths[index] + 2 - text.count)
                }
            }
            while line.last == " " { line.removeLast() }
            return line
        }
        if !cells.isEmpty {
            lines.append(format(columns))
            lines.append(contentsOf: cells.map(format))
        } else if unlisted.isEmpty, let words = OccurrenceWords.withoutAttempt(run) {
            lines.append(words)
        }
        if !unlisted.isEmpty {
            let counts = JobState.allCases.compactMap { state in
                unlisted[state].map { "\($0) \(state.rawValue)" }
            }
            lines.append(
                "… and \(counts.joined(separator: ", ")) not listed (`jobrunner status --all` lists every job)"
            )
        }
        let pipelineText = pipelines.map { row in
            let limit = row.maxConcurrent == 0 ? "∞" : String(row.maxConcurrent)
            return "\(row.name) \(row.running)/\(limit) running"
                + (row.suspended > 0 ? ", suspended: \(row.suspended)" : "")
        }
        lines.append("pipelines: " + (pipelineText.isEmpty ? "none" : pipelineText.joined(separator: "; ")))
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
        return lines.map(VisibleText.escaped).joined(separator: "\n")
    }
}
