import Foundation
import JobRunnerCore

extension Words {
    /// What `status` says of a job in its `DETAIL` column: what it waits for, how long it took,
    /// why it failed.
    static func detail(of job: RunView.Job, states: [String: JobState], now: Date) -> String {
        let record = job.record
        switch record.state {
        case .pending, .waiting:
            guard let reason = job.waitingFor else {
                return "\(record.state.rawValue); runs at the next `jobrunner run`"
            }
            return waiting(reason, record: record, states: states, now: now)
        case .running:
            let since = record.startedAt.map { " since \(moment($0, now: now))" } ?? ""
            return "attempt \(record.attempts)\(since)"
        case .succeeded:
            guard let start = record.startedAt, let end = record.finishedAt else { return "" }
            return "took \(elapsed(end.timeIntervalSince(start)))"
        case .failed:
            let attempts = "\(record.attempts) attempt\(record.attempts == 1 ? "" : "s")"
            let allowed = record.isAllowedFailure ? "failed (allowed): " : ""
            return "\(allowed)\(record.reason?.words ?? "failed") (\(attempts))"
        case .skipped, .blocked, .cancelled:
            return record.reason?.words ?? ""
        }
    }

    private static func waiting(
        _ reason: WaitingReason, record: JobRecord, states: [String: JobState], now: Date
    ) -> String {
        let since = record.waitingSince.map { " since \(moment($0, now: now))" } ?? ""
        switch reason {
        case .needs(let need):
            return "waiting for \(need) (\(states[need]?.rawValue ?? "unknown"))"
        case .backoff:
            let next = record.nextAttemptAt.map { moment($0, now: now) } ?? "?"
            return "backoff until \(next) (\(record.nextAttemptWords))"
        case .constraint(let name): return "waiting for constraint \(name)\(since)"
        case .internet: return "waiting for internet\(since)"
        case .suspended: return "suspended pipeline \(record.pipeline)"
        case .interrupted: return "interrupted; starts again on the next run"
        case .slot: return "waiting for a slot in pipeline \(record.pipeline)"
        case .schedule: return "waiting for its next scheduled date"
        }
    }

    /// What `runs` says in its `OF` column: `jobs`, or `tick @ 19:07:15` for an occurrence.
    static func of(_ run: RunRecord) -> String {
        run.occurrenceOf.map { job in "\(job) @ \(run.scheduledAt.map(clock) ?? "?")" } ?? "jobs"
    }

    /// The run's first line, as `status` says it: its runner, or why it has none.
    static func runner(of run: RunRecord, runnerPID: Int32?, replaced: Bool) -> String? {
        if let runnerPID, !run.state.isFinal { return "runner pid \(runnerPID)" }
        guard !run.state.isFinal else { return nil }
        return replaced
            ? "no runner: a newer run replaced it" : "no runner: the next `jobrunner run` resumes it"
    }

    /// For a skipped or missed occurrence, which has no job, attempt or log: what became of it
    /// (as `status` and `logs` say).
    static func withoutAttempt(_ run: RunRecord, now: Date) -> String? {
        run.withoutAttemptWords { moment($0, now: now) }
    }

    /// `3/4 running`, `∞` for no limit, as `status` says.
    static func pipeline(_ pipeline: RunView.Pipeline) -> String {
        let limit = pipeline.maxConcurrent == 0 ? "∞" : String(pipeline.maxConcurrent)
        return "\(pipeline.running)/\(limit) running"
    }
}
