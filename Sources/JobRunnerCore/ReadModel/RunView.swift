import Foundation

/// A run and its jobs as a reader shows them (`status`, the HTTP API): each job's state and
/// reason, what a waiting job waits for now, the pipelines with their running jobs and
/// suspensions, and the periodic jobs' schedules. Made by ``ReadModel/runView(runID:all:)``.
public struct RunView: Sendable {
    /// A job as shown.
    public struct Job: Sendable, Hashable {
        public var record: JobRecord
        /// The state shown: a pending job that waits on something shows as `waiting`.
        public var state: JobState
        public var reason: JobReason?
        /// What a job that is neither running nor final waits for now; nil for the others,
        /// and for one that waits for a slot in a run no runner works on: it starts at the
        /// next `jobrunner run`.
        public var waitingFor: WaitingReason?

        public init(record: JobRecord, state: JobState, reason: JobReason?, waitingFor: WaitingReason?) {
            self.record = record
            self.state = state
            self.reason = reason
            self.waitingFor = waitingFor
        }
    }

    /// A pipeline the run uses or declares, or one an operator suspended.
    public struct Pipeline: Sendable, Hashable {
        public var name: String
        /// 0: unlimited.
        public var maxConcurrent: Int
        public var suspended: Int
        public var running: Int

        public init(name: String, maxConcurrent: Int, suspended: Int, running: Int) {
            self.name = name
            self.maxConcurrent = maxConcurrent
            self.suspended = suspended
            self.running = running
        }
    }

    /// Every job's state, and the records of the listed jobs.
    public var overview: RunOverview
    public var run: RunRecord { overview.run }
    /// Jobs not listed, by state (the succeeded ones of a big run, unless all are asked for).
    public var unlisted: [JobState: Int] = [:]
    public var pipelines: [Pipeline]
    /// The pid of the runner at work on the store now, if any.
    public var runnerPID: Int32?
    /// Whether a newer run replaced this one as the current run (`run --new`, or other jobs
    /// loaded): no runner resumes it then.
    public var replaced = false
    /// The periodic jobs' schedule records, by job id (SPEC 5.8).
    public var schedules: [String: ScheduleRecord] = [:]
    /// Each periodic job's occurrence under way, if it has one (SPEC 5.12), by job id.
    public var underWay: [String: OccurrenceUnderWay] = [:]
    /// Operator requests stored and not taken yet, oldest first: this run's, and the triggers
    /// and the requests about occurrences that wait for a runner (``OperatorRequest/periodicRequests``).
    public var pendingRequests: [OperatorRequest] = []

    /// A periodic job's occurrence under way: one with a run that is not final (running,
    /// waiting, or left by a runner that stopped), or one decided that has no run yet (queued
    /// behind the running one, or held for its needs).
    public struct OccurrenceUnderWay: Sendable, Hashable {
        /// Its run; nil while it has none.
        public var runID: String?
        public var scheduledAt: Date
        /// Asked for by `jobrunner trigger`.
        public var manual: Bool
        /// Its job as shown: running, or waiting and why; nil while it has no run.
        public var job: Job?

        public init(runID: String?, scheduledAt: Date, manual: Bool, job: Job?) {
            self.runID = runID
            self.scheduledAt = scheduledAt
            self.manual = manual
            self.job = job
        }
    }
    /// Each pipeline's suspension count, from its record.
    private let suspensions: [String: Int]
    /// Whether no runner works on the run, so that its open jobs wait for the next `run`.
    private let idle: Bool

    /// Runs with more jobs than this list only the jobs that did not succeed, unless all are
    /// asked for.
    public static let fullListLimit = 100

    /// Which jobs are read whole and listed: all of them in a run of up to ``fullListLimit``
    /// jobs or with `all`, else those that did not succeed.
    public static func lists(_ state: JobState, jobCount: Int, all: Bool) -> Bool {
        all || jobCount <= fullListLimit || state != .succeeded
    }

    /// - Parameters:
    ///   - suspended: the pipelines' records, for their suspend counts.
    ///   - runnerPID: the runner at work on the store now, if any.
    ///   - countsUnlisted: whether to count the jobs not listed (a reader that writes every job
    ///     has none).
    public init(
        overview: RunOverview, suspended: [String: PipelineRecord], runnerPID: Int32?,
        countsUnlisted: Bool = true
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
            Pipeline(
                name: name,
                maxConcurrent: overview.run.pipelineLimits[name] ?? PipelineDefinition.defaultMaxConcurrent,
                suspended: suspended[name]?.suspended ?? 0, running: running[name] ?? 0)
        }
        // A run no runner works on does not wait for slots: its open jobs start at the next `run`.
        idle = overview.run.state == .stopped || (overview.run.state == .running && runnerPID == nil)
        suspensions = suspended.mapValues(\.suspended)
        guard countsUnlisted else { return }
        // Counted by position, not in a dictionary: a state hashes its name. `isEmpty` first: a
        // big finished run lists no job, and a lookup hashes the id.
        var counts = [Int](repeating: 0, count: JobState.allCases.count)
        for id in overview.run.jobIDs where jobs.isEmpty || jobs[id] == nil {
            if let state = overview.states[id], let index = JobState.allCases.firstIndex(of: state) {
                counts[index] += 1
            }
        }
        for (index, state) in JobState.allCases.enumerated() where counts[index] > 0 {
            unlisted[state] = counts[index]
        }
    }

    /// Calls `body` with each listed job, in the run's order.
    public func forEachJob(_ body: (Job) -> Void) {
        let jobs = overview.jobs
        for id in overview.run.jobIDs {
            guard let record = jobs[id] else { continue }
            body(job(record, jobs: jobs))
        }
    }

    private func job(_ record: JobRecord, jobs: [String: JobRecord]) -> Job {
        switch record.state {
        case .pending, .waiting:
            let reason = Self.waitingReason(
                of: record, jobs: jobs, states: overview.states, suspended: suspensions[record.pipeline] ?? 0)
            if idle && reason == .slot {
                return Job(record: record, state: record.state, reason: record.reason, waitingFor: nil)
            }
            return Job(record: record, state: .waiting, reason: .waiting(reason), waitingFor: reason)
        default:
            return Job(
                record: record, state: record.state,
                reason: record.state == .running ? nil : record.reason, waitingFor: nil)
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
}
