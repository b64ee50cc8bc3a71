import Foundation

/// What a stored job record says of how its job went: every member of ``JobRecord`` but the
/// definition's (pipeline, needs, `maxAttempts`, `allowFailure`, `when`), which a resumed run
/// takes from the job files afresh (SPEC 5.9). A store reads this much of each record to resume a
/// run, without making the record's arrays and strings.
public struct JobProgress: Sendable, Hashable {
    public var jobID: String
    public var occurrence: String
    public var state: JobState
    public var reason: JobReason?
    public var attempts: Int
    public var uncountedAttempts: Int
    public var crashedInARow: Int
    public var exitCode: Int32?
    public var firstStartedAt: Date?
    public var startedAt: Date?
    public var finishedAt: Date?
    public var nextAttemptAt: Date?
    public var waitingSince: Date?
    /// Why its latest attempt's log is not all it printed (``JobRecord/logProblem``).
    public var logProblem: String?

    public init(
        jobID: String, occurrence: String = "", state: JobState, reason: JobReason? = nil, attempts: Int = 0,
        uncountedAttempts: Int = 0, crashedInARow: Int = 0, exitCode: Int32? = nil,
        firstStartedAt: Date? = nil,
        startedAt: Date? = nil, finishedAt: Date? = nil, nextAttemptAt: Date? = nil, waitingSince: Date? = nil
    ) {
        self.jobID = jobID
        self.occurrence = occurrence
        self.state = state
        self.reason = reason
        self.attempts = attempts
        self.uncountedAttempts = uncountedAttempts
        self.crashedInARow = crashedInARow
        self.exitCode = exitCode
        self.firstStartedAt = firstStartedAt
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.nextAttemptAt = nextAttemptAt
        self.waitingSince = waitingSince
    }

    /// A record's progress.
    public init(_ record: JobRecord) {
        self.init(
            jobID: record.jobID, occurrence: record.occurrence, state: record.state, reason: record.reason,
            attempts: record.attempts, uncountedAttempts: record.uncountedAttempts,
            crashedInARow: record.crashedInARow, exitCode: record.exitCode,
            firstStartedAt: record.firstStartedAt,
            startedAt: record.startedAt, finishedAt: record.finishedAt, nextAttemptAt: record.nextAttemptAt,
            waitingSince: record.waitingSince)
        logProblem = record.logProblem
    }

    /// Whether it is what a new run starts a job with: pending, never started, nothing to say.
    var isUntouched: Bool {
        state == .pending && occurrence.isEmpty && reason == nil && attempts == 0 && uncountedAttempts == 0
            && crashedInARow == 0 && exitCode == nil && firstStartedAt == nil && startedAt == nil
            && finishedAt == nil && nextAttemptAt == nil && waitingSince == nil && logProblem == nil
    }
}

extension JobRecord {
    /// The record of `job` with `progress`: the definition's members are the plan's.
    init(_ job: RunPlan.Job, _ progress: JobProgress) {
        self.init(pending: job)
        occurrence = progress.occurrence
        state = progress.state
        reason = progress.reason
        attempts = progress.attempts
        uncountedAttempts = progress.uncountedAttempts
        crashedInARow = progress.crashedInARow
        exitCode = progress.exitCode
        firstStartedAt = progress.firstStartedAt
        startedAt = progress.startedAt
        finishedAt = progress.finishedAt
        nextAttemptAt = progress.nextAttemptAt
        waitingSince = progress.waitingSince
        logProblem = progress.logProblem
    }
}

/// What resuming a run reads of it (SPEC 5.9): its record, its jobs' records as the plan's jobs
/// (the members of each job's definition are the plan's; records of jobs the plan does not have
/// are left out), the attempts left without an outcome, and the outputs.
///
/// A store fills it row by row (``take(_:)-(JobProgress)``): a resumed run of 100,000 jobs is
/// mostly succeeded and untouched pending jobs, which keep a few bytes each instead of a record.
public struct ResumableRun: Sendable {
    public var run: RunRecord
    var jobs: JobTable
    /// The attempts without an outcome, by job id, in attempt order.
    public var attempts: [String: [AttemptRecord]] = [:]
    /// Outputs by job id.
    public var outputs: [String: [String: String]] = [:]

    /// A run whose jobs have no records yet.
    public init(run: RunRecord, plan: RunPlan) {
        self.run = run
        self.jobs = JobTable(plan: plan)
    }

    /// Takes a job's stored record, as read in part.
    public mutating func take(_ progress: JobProgress) { jobs.take(progress) }

    /// Takes a job's stored record.
    public mutating func take(_ record: JobRecord) { jobs.take(JobProgress(record)) }

    /// A job's record as resuming takes it.
    public func record(_ id: String) -> JobRecord? { jobs[id] }

    /// Every record, in the plan's order.
    public var records: [JobRecord] { Array(jobs.values) }
}
