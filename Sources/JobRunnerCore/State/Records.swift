import Foundation

/// A run as stored: one execution of a loaded set of jobs.
public struct RunRecord: Sendable, Hashable, Codable {
    public var id: String
    public var state: RunState
    public var startedAt: Date
    public var finishedAt: Date?
    /// The run's job ids in load order; a run is resumed only by the same set (SPEC 5.9).
    public var jobIDs: [String]
    /// The pid of the runner that works or last worked on it.
    public var runnerPID: Int32
    /// Each pipeline's `maxConcurrent` as last loaded, so `status` can show limits without
    /// the job files.
    public var pipelineLimits: [String: Int]
    /// For a periodic job's occurrence (a run of its own, SPEC 5.8): the job.
    public var occurrenceOf: String?
    /// For an occurrence: its scheduled date (for one `jobrunner trigger` asked for, the time of
    /// the request).
    public var scheduledAt: Date?
    /// True for an occurrence `jobrunner trigger` asked for (SPEC 5.12); nil otherwise.
    public var manual: Bool?

    public init(
        id: String, state: RunState, startedAt: Date, finishedAt: Date? = nil, jobIDs: [String],
        runnerPID: Int32, pipelineLimits: [String: Int] = [:]
    ) {
        self.pipelineLimits = pipelineLimits
        self.id = id
        self.state = state
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.jobIDs = jobIDs
        self.runnerPID = runnerPID
    }
}

/// A job of a run as stored. One-shot jobs have an empty `occurrence`; a periodic job's
/// occurrence is its scheduled date (SPEC 5.8), so both share one table without a migration.
public struct JobRecord: Sendable, Hashable, Codable {
    public var jobID: String
    public var occurrence: String
    public var pipeline: String
    /// The jobs it needs, as last loaded; lets `status` say what a job waits for.
    public var needs: [String]
    /// `retry.attempts` as last loaded (nil: unlimited), for "attempt 2 of 5".
    public var maxAttempts: Int?
    public var state: JobState
    /// What a waiting job waits for, or why a final one ended as it did; stored as its words.
    public var reason: JobReason?
    /// Attempts started so far; the next attempt's number is `attempts + 1`.
    public var attempts: Int
    /// Attempts that do not count against `retry.attempts` (stopped by an operator or a clean stop).
    public var uncountedAttempts: Int
    /// Attempts in a row that a dying runner interrupted (SPEC 5.9 crash loops).
    public var crashedInARow: Int
    public var exitCode: Int32?
    public var firstStartedAt: Date?
    public var startedAt: Date?
    public var finishedAt: Date?
    public var nextAttemptAt: Date?
    /// Since when a waiting job has waited for its reason (internet, a constraint).
    public var waitingSince: Date?
    /// `allowFailure` as last loaded: a failure satisfies needs and does not fail the run.
    public var allowFailure = false
    /// `when` as last loaded.
    public var when = RunCondition.success
    /// Why its latest ended attempt's log is not all that attempt printed (a full disk), as
    /// ``AttemptRecord/logProblem`` says; nil when it is.
    public var logProblem: String?

    public init(
        jobID: String, occurrence: String = "", pipeline: String, needs: [String] = [], maxAttempts: Int? = 1,
        state: JobState = .pending,
        reason: JobReason? = nil, attempts: Int = 0, uncountedAttempts: Int = 0, crashedInARow: Int = 0,
        exitCode: Int32? = nil, firstStartedAt: Date? = nil, startedAt: Date? = nil,
        finishedAt: Date? = nil, nextAttemptAt: Date? = nil
    ) {
        self.jobID = jobID
        self.occurrence = occurrence
        self.pipeline = pipeline
        self.needs = needs
        self.maxAttempts = maxAttempts
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
    }

    /// Attempts that count against the retry budget.
    public var countedAttempts: Int { attempts - uncountedAttempts }

    /// What a waiting job waits for, when its record says.
    public var waitingReason: WaitingReason? { reason?.waiting }

    /// Whether it lets the jobs that need it go on: it succeeded, was skipped, or failed with
    /// `allowFailure`.
    public var satisfiesNeeds: Bool { state.satisfiesNeeds || isAllowedFailure }

    /// Whether it failed with `allowFailure`: shown as `failed (allowed)`, not a failure of the run.
    public var isAllowedFailure: Bool { state == .failed && allowFailure }

    /// Whether it ended in a way that fails the run: failed (not allowed), blocked or cancelled.
    public var failsRun: Bool {
        switch state {
        case .failed: !allowFailure
        case .blocked, .cancelled: true
        default: false
        }
    }
}

extension JobRecord {
    private enum CodingKeys: String, CodingKey {
        case jobID, occurrence, pipeline, needs, maxAttempts, state, reason, attempts, uncountedAttempts
        case crashedInARow, exitCode, firstStartedAt, startedAt, finishedAt, nextAttemptAt, waitingSince
        case allowFailure, when, logProblem
    }

    /// Reads a record; the reason is stored as its words and read back knowing the state.
    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        jobID = try values.decode(String.self, forKey: .jobID)
        occurrence = try values.decodeIfPresent(String.self, forKey: .occurrence) ?? ""
        pipeline = try values.decode(String.self, forKey: .pipeline)
        needs = try values.decodeIfPresent([String].self, forKey: .needs) ?? []
        maxAttempts = try values.decodeIfPresent(Int.self, forKey: .maxAttempts)
        let state = try values.decode(JobState.self, forKey: .state)
        self.state = state
        reason = try values.decodeIfPresent(String.self, forKey: .reason).map {
            JobReason(words: $0, state: state)
        }
        attempts = try values.decode(Int.self, forKey: .attempts)
        uncountedAttempts = try values.decodeIfPresent(Int.self, forKey: .uncountedAttempts) ?? 0
        crashedInARow = try values.decodeIfPresent(Int.self, forKey: .crashedInARow) ?? 0
        exitCode = try values.decodeIfPresent(Int32.self, forKey: .exitCode)
        firstStartedAt = try values.decodeIfPresent(Date.self, forKey: .firstStartedAt)
        startedAt = try values.decodeIfPresent(Date.self, forKey: .startedAt)
        finishedAt = try values.decodeIfPresent(Date.self, forKey: .finishedAt)
        nextAttemptAt = try values.decodeIfPresent(Date.self, forKey: .nextAttemptAt)
        waitingSince = try values.decodeIfPresent(Date.self, forKey: .waitingSince)
        allowFailure = try values.decodeIfPresent(Bool.self, forKey: .allowFailure) ?? false
        when = try values.decodeIfPresent(RunCondition.self, forKey: .when) ?? .success
        logProblem = try values.decodeIfPresent(String.self, forKey: .logProblem)
    }

    /// Writes a record with its reason as words: the members `RecordJSON` writes, and the ones it
    /// leaves out at their defaults (`init(from:)` reads those back as the defaults).
    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(jobID, forKey: .jobID)
        try values.encode(occurrence, forKey: .occurrence)
        try values.encode(pipeline, forKey: .pipeline)
        try values.encode(needs, forKey: .needs)
        try values.encodeIfPresent(maxAttempts, forKey: .maxAttempts)
        try values.encode(state, forKey: .state)
        try values.encodeIfPresent(reason?.words, forKey: .reason)
        try values.encode(attempts, forKey: .attempts)
        try values.encode(uncountedAttempts, forKey: .uncountedAttempts)
        try values.encode(crashedInARow, forKey: .crashedInARow)
        try values.encodeIfPresent(exitCode, forKey: .exitCode)
        try values.encodeIfPresent(firstStartedAt, forKey: .firstStartedAt)
        try values.encodeIfPresent(startedAt, forKey: .startedAt)
        try values.encodeIfPresent(finishedAt, forKey: .finishedAt)
        try values.encodeIfPresent(nextAttemptAt, forKey: .nextAttemptAt)
        try values.encodeIfPresent(waitingSince, forKey: .waitingSince)
        if allowFailure { try values.encode(allowFailure, forKey: .allowFailure) }
        if when != .success { try values.encode(when, forKey: .when) }
        try values.encodeIfPresent(logProblem, forKey: .logProblem)
    }
}

/// One attempt of one job as stored.
public struct AttemptRecord: Sendable, Hashable, Codable {
    public var jobID: String
    public var occurrence: String
    public var number: Int
    /// nil while the attempt runs.
    public var outcome: AttemptOutcome?
    public var startedAt: Date
    public var finishedAt: Date?
    public var exitCode: Int32?
    public var signal: Int32?
    public var reason: String?
    /// The process (and process group) of a shell attempt, so a restarted runner can
    /// check whether it still lives and end it (SPEC 5.9).
    public var pid: Int32?
    /// The process's start time in clock ticks since boot (/proc/PID/stat field 22):
    /// tells a reused pid from ours.
    public var pidStartTime: UInt64?
    public var logPath: String?
    /// Why the attempt's log is not all it printed (a full disk), when it is not; nil for a
    /// log that holds all it was given (SPEC 5.2's cut included).
    public var logProblem: String?

    public init(
        jobID: String, occurrence: String = "", number: Int, outcome: AttemptOutcome? = nil,
        startedAt: Date, finishedAt: Date? = nil, exitCode: Int32? = nil, signal: Int32? = nil,
        reason: String? = nil, pid: Int32? = nil, pidStartTime: UInt64? = nil, logPath: String? = nil,
        logProblem: String? = nil
    ) {
        self.jobID = jobID
        self.occurrence = occurrence
        self.number = number
        self.outcome = outcome
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.exitCode = exitCode
        self.signal = signal
        self.reason = reason
        self.pid = pid
        self.pidStartTime = pidStartTime
        self.logPath = logPath
        self.logProblem = logProblem
    }
}

/// A pipeline's persisted state; lives across runs.
public struct PipelineRecord: Sendable, Hashable, Codable {
    public var name: String
    /// Nested suspend count: above zero, no new attempt starts (SPEC 5.3).
    public var suspended: Int

    public init(name: String, suspended: Int = 0) {
        self.name = name
        self.suspended = suspended
    }
}
