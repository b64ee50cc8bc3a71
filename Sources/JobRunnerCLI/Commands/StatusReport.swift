import Foundation
import JobRunnerCore

/// What `status` shows about a run (a ``RunView``, read through the read model): each job's
/// state in a person's words, and the pipelines.
struct StatusReport {
    struct Row {
        var record: JobRecord
        /// The state shown: a pending job that waits on something shows as `waiting`.
        var state: JobState
        var reason: JobReason?
        var words: String
    }

    let view: RunView
    var rows: [Row]
    /// Whether rows put their state into words.
    private let describing: Bool

    var overview: RunOverview { view.overview }
    var pipelines: [RunView.Pipeline] { view.pipelines }
    var unlisted: [JobState: Int] { view.unlisted }
    var schedules: [String: ScheduleRecord] { view.schedules }

    /// - Parameter describing: whether to make the table's rows, with each state put into
    ///   words; JSON makes its rows as it writes them (``forEachRow(_:)``).
    init(view: RunView, describing: Bool = true) {
        self.view = view
        self.describing = describing
        rows = []
        guard describing else { return }
        var rows: [Row] = []
        rows.reserveCapacity(view.overview.jobs.count)
        forEachRow { rows.append($0) }
        self.rows = rows
    }

    /// Calls `body` with the row of each listed job, in the run's order, each state put into
    /// words when the report is `describing`.
    func forEachRow(_ body: (Row) -> Void) {
        let states = view.overview.states
        view.forEachJob { job in
            var row = Row(record: job.record, state: job.state, reason: job.reason, words: "")
            if describing {
                row.words = Self.words(for: job, states: states)
                // A log lost to a full disk is said, never taken for one that is empty.
                if let problem = job.record.logProblem {
                    row.words += (row.words.isEmpty ? "" : "; ") + problem
                }
            }
            body(row)
        }
    }

    /// A periodic job's occurrence under way, in words: `running (tick @ 19:07:15, attempt 1)`,
    /// `waiting for backoff (…)`, `queued (…)`.
    static func words(for occurrence: RunView.OccurrenceUnderWay, jobID: String) -> String {
        let name =
            "\(jobID) @ \(Timestamps.clock(occurrence.scheduledAt))" + (occurrence.manual ? ", trigger" : "")
        guard let job = occurrence.job else {
            return "queued (\(name)): waits for the running one or its needs"
        }
        switch job.record.state {
        case .running:
            return "running (\(name), attempt \(job.record.attempts))"
        case .pending, .waiting:
            guard let reason = job.waitingFor else {
                return "\(job.record.state.rawValue) (\(name)); runs when a runner resumes it"
            }
            return words(for: reason, record: job.record, states: [:]) + " (\(name))"
        default:
            return "\(job.record.state.rawValue) (\(name))"
        }
    }

    /// The `DETAIL` of a job.
    private static func words(for job: RunView.Job, states: [String: JobState]) -> String {
        let record = job.record
        switch record.state {
        case .pending, .waiting:
            guard let reason = job.waitingFor else {
                return "\(record.state.rawValue); runs at the next `jobrunner run`"
            }
            return words(for: reason, record: record, states: states)
        default:
            return words(forFinalOrRunning: record)
        }
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

    private static func words(for reason: WaitingReason, record: JobRecord, states: [String: JobState])
        -> String
    {
        let since = record.waitingSince.map { " since \(Timestamps.moment($0))" } ?? ""
        switch reason {
        case .needs(let need):
            return "waiting for \(need) (\(states[need]?.rawValue ?? "unknown"))"
        case .backoff:
            let next = record.nextAttemptAt.map { Timestamps.moment($0) } ?? "?"
            return "backoff until \(next) (\(record.nextAttemptWords))"
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
        let run = view.run
        var lines: [String] = []
        // An occurrence recorded without running never started: its dates are when it was noted.
        var head =
            "run \(run.id)  \(run.state.rawValue)  started \(run.neverStarted ? "-" : Timestamps.moment(run.startedAt))"
        if let finished = run.finishedAt, !run.neverStarted {
            head += "  finished \(Timestamps.moment(finished))"
        }
        if let runnerPID = view.runnerPID {
            head += "  (runner pid \(runnerPID))"
        } else if !run.state.isFinal {
            head +=
                view.replaced
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
                let now =
                    view.underWay[record.jobID].map { Self.words(for: $0, jobID: record.jobID) + "; " } ?? ""
                // A trigger a runner refused, maybe one stored while nobody watched its output.
                let refused =
                    record.refusedTrigger.map {
                        "; trigger of \(Timestamps.moment($0.requestedAt)) refused: \($0.reason)"
                    } ?? ""
                lines.append("  \(record.jobID): \(now)\(last); \(next)\(refused)")
            }
            if view.runnerPID == nil {
                // With no runner, an occurrence that has a run and is not final was left by one
                // that stopped: the next one resumes it, which is said with the rest.
                let left = view.underWay.filter { $0.value.runID != nil }
                    .sorted { ($0.value.scheduledAt, $0.key) < ($1.value.scheduledAt, $1.key) }
                    .map { "\($0.key) @ \(Timestamps.clock($0.value.scheduledAt))" }
                let resumes =
                    left.isEmpty
                    ? ""
                    : "; it resumes the occurrence\(left.count == 1 ? "" : "s") left stopped (\(left.joined(separator: ", ")))"
                lines.append(
                    "no runner is serving this state directory: periodic jobs fire only while `jobrunner serve` runs"
                        + resumes)
            }
        }
        if !view.pendingRequests.isEmpty {
            let waiting =
                view.runnerPID == nil
                ? "stored for the next `jobrunner serve` or `jobrunner run`"
                : "waiting for the runner to take them"
            lines.append("pending requests (\(waiting)):")
            for request in view.pendingRequests {
                let occurrence = request.runID.map { " (occurrence \($0))" } ?? ""
                lines.append(
                    "  \(request.kind.rawValue) \(request.jobID)\(occurrence), asked \(Timestamps.moment(request.requestedAt))"
                )
            }
        }
        return lines.map(VisibleText.escaped).joined(separator: "\n")
    }
}
