import Foundation

/// The one set of queries every reader uses: `status`, `runs`, `logs`, `wait`, `prune`, the
/// operator commands, and the HTTP API. Readers never reach into a store's own storage: they
/// ask this, over any ``QueueStore``, and follow its ``events(after:)``.
public struct ReadModel: Sendable {
    /// The store read.
    public let store: any QueueStore
    /// Who works on the store, for the readers that say so; nil: nobody is known to.
    public let lock: (any RunnerLock)?
    /// Where attempt logs are.
    public let logs: LogLocation

    public init(store: any QueueStore, lock: (any RunnerLock)?, logs: LogLocation) {
        self.store = store
        self.lock = lock
        self.logs = logs
    }

    // MARK: Runs

    /// The id of the current run (the latest run of one-shot jobs), if any.
    public func currentRunID() async throws(StoreError) -> String? {
        try await store.currentRunID()
    }

    /// A run's record, or nil when there is no such run.
    public func run(_ id: String) async throws(StoreError) -> RunRecord? {
        try await store.run(id: id)
    }

    /// Every run, oldest first.
    public func runs() async throws(StoreError) -> [RunRecord] {
        try await store.runs()
    }

    /// Everything stored about a run: its jobs, their attempts and outputs.
    public func snapshot(runID: String) async throws(StoreError) -> RunSnapshot? {
        try await store.snapshot(runID: runID)
    }

    /// A run in the runs list, with how many of its jobs are in each state.
    public struct RunEntry: Sendable, Hashable {
        public var run: RunRecord
        public var counts: [JobState: Int]
    }

    /// The latest runs, newest first (by start), at most `limit`, each with its jobs' counts.
    /// - Parameter job: only the runs of this job: a periodic job's occurrences, or the runs of
    ///   one-shot jobs that hold it (SPEC 5.12, `runs --job`).
    public func recentRuns(limit: Int, job: String? = nil) async throws(StoreError) -> [RunEntry] {
        var entries: [RunEntry] = []
        var runs = try await store.runs()
        if let job {
            runs = runs.filter {
                $0.occurrenceOf == job || ($0.occurrenceOf == nil && $0.jobIDs.contains(job))
            }
        }
        // An occurrence by its date: missed ones, recorded together when a runner came back,
        // share the moment they were recorded, and sorted by it the newest were cut by `limit`.
        func date(_ run: RunRecord) -> Date { run.scheduledAt ?? run.startedAt }
        let newestFirst = runs.sorted { date($0) != date($1) ? date($0) > date($1) : $0.id > $1.id }
        for run in newestFirst.prefix(limit) {
            // The states alone: no job is read whole.
            let overview = try await store.overview(
                runID: run.id, listing: { _, _ in false }, withOutputs: false)
            var counts: [JobState: Int] = [:]
            for state in overview?.states.values.map({ $0 }) ?? [] { counts[state, default: 0] += 1 }
            entries.append(RunEntry(run: overview?.run ?? run, counts: counts))
        }
        return entries
    }

    /// A run and its jobs as `status` shows them; nil when there is no such run.
    /// - Parameters:
    ///   - all: every job is read whole and listed; else, in a run of more than
    ///     ``RunView/fullListLimit`` jobs, only those that did not succeed (and their outputs
    ///     are not read).
    ///   - countsUnlisted: whether the view counts the jobs it does not list.
    public func runView(runID: String, all: Bool, countsUnlisted: Bool = true) async throws(StoreError)
        -> RunView?
    {
        guard
            let overview = try await store.overview(
                runID: runID, listing: { RunView.lists($0, jobCount: $1.jobIDs.count, all: all) },
                withOutputs: all)
        else { return nil }
        let pipelines = try await store.pipelines()
        let schedules = try await store.schedules()
        let current = try await store.currentRunID()
        var view = RunView(
            overview: overview, suspended: pipelines, runnerPID: await runnerPID(),
            countsUnlisted: countsUnlisted)
        view.schedules = schedules
        if !schedules.isEmpty {
            view.underWay = try await occurrencesUnderWay(schedules, pipelines: pipelines)
        }
        if overview.run.occurrenceOf == nil { view.replaced = current != overview.run.id }
        view.pendingRequests =
            (try await store.requests(runID: OperatorRequest.periodicRequests)
            + store.requests(runID: runID)).sorted { $0.id < $1.id }
        return view
    }

    /// Each periodic job's occurrence under way (SPEC 5.12): its latest run that is not final,
    /// its job as shown; else the first date its schedule record lists as waiting.
    public func occurrencesUnderWay(
        _ schedules: [String: ScheduleRecord], pipelines: [String: PipelineRecord]
    ) async throws(StoreError) -> [String: RunView.OccurrenceUnderWay] {
        var found: [String: RunView.OccurrenceUnderWay] = [:]
        let runnerPID = await runnerPID()
        let open = try await store.runs().filter { run in
            run.occurrenceOf.map { schedules[$0] != nil } == true && !run.state.isFinal
        }
        for run in open.sorted(by: { ($0.scheduledAt ?? $0.startedAt) < ($1.scheduledAt ?? $1.startedAt) }) {
            guard let jobID = run.occurrenceOf,
                let overview = try await store.overview(
                    runID: run.id, listing: { _, _ in true }, withOutputs: false)
            else { continue }
            var shown: RunView.Job? = nil
            let view = RunView(
                overview: overview, suspended: pipelines, runnerPID: runnerPID, countsUnlisted: false)
            view.forEachJob { job in if job.record.jobID == jobID { shown = job } }
            found[jobID] = RunView.OccurrenceUnderWay(
                runID: run.id, scheduledAt: run.scheduledAt ?? run.startedAt, manual: run.manual == true,
                job: shown)
        }
        for (jobID, record) in schedules where found[jobID] == nil {
            guard let date = record.waiting.first else { continue }
            found[jobID] = RunView.OccurrenceUnderWay(
                runID: nil, scheduledAt: date, manual: record.triggered.contains(date), job: nil)
        }
        return found
    }

    // MARK: Pipelines, schedules, requests

    /// Persisted pipeline records (suspend counts) by name.
    public func pipelines() async throws(StoreError) -> [String: PipelineRecord] {
        try await store.pipelines()
    }

    /// The names an operator may suspend: the pipelines of the recent runs and those with a
    /// stored suspension; empty before the first run.
    public func knownPipelines() async throws(StoreError) -> Set<String> {
        var names = Set(try await store.pipelines().filter { $0.value.suspended > 0 }.keys)
        for run in try await store.runs().suffix(20) {
            names.formUnion(run.pipelineLimits.keys)
        }
        return names
    }

    /// The periodic jobs' schedule records, by job id.
    public func schedules() async throws(StoreError) -> [String: ScheduleRecord] {
        try await store.schedules()
    }

    /// Operator requests not yet taken by the run's runner, oldest first.
    public func requests(runID: String) async throws(StoreError) -> [OperatorRequest] {
        try await store.requests(runID: runID)
    }

    // MARK: Periodic jobs

    /// A periodic job's latest occurrence that ran (was not skipped or missed), else its latest
    /// of any kind; nil when it has none. `ran` says which.
    public func latestOccurrence(of jobID: String) async throws(StoreError) -> (run: RunRecord, ran: Bool)? {
        let occurrences = try await store.runs().filter { $0.occurrenceOf == jobID }
        let ran = occurrences.filter { $0.state != .skipped && $0.state != .missed }
        let earlier = { (a: RunRecord, b: RunRecord) in
            (a.scheduledAt ?? a.startedAt) < (b.scheduledAt ?? b.startedAt)
        }
        if let latest = ran.max(by: earlier) { return (latest, true) }
        return occurrences.max(by: earlier).map { ($0, false) }
    }

    // MARK: Logs

    /// Where an attempt's log is.
    public func logPath(of attempt: AttemptRecord, runID: String) -> String {
        logs.path(of: attempt, runID: runID)
    }

    /// An attempt's log from byte `offset` on (empty when it has no log, or nothing more).
    public func logContent(of attempt: AttemptRecord, runID: String, from offset: UInt64 = 0) -> Data {
        guard let handle = FileHandle(forReadingAtPath: logPath(of: attempt, runID: runID)) else {
            return Data()
        }
        defer { try? handle.close() }
        try? handle.seek(toOffset: offset)
        return handle.readDataToEndOfFile()
    }

    // MARK: The runner

    /// Whether a runner works on the store now.
    public func runnerWorks() async -> Bool {
        await lock?.runnerWorks() ?? false
    }

    /// The pid of the runner at work on the store now, if any (and known).
    public func runnerPID() async -> Int32? {
        await lock?.runnerPID()
    }

    // MARK: Committed events

    /// The events committed after `sequence`, as they come: a reader resumes after the last
    /// one it saw. It never ends by itself; it ends (nil) when its task is cancelled.
    public func events(after sequence: UInt64) -> CommittedEvents {
        CommittedEvents(store: store, after: sequence)
    }

    /// The sequence number of the latest committed event: where a reader that wants only what
    /// comes next starts.
    public func latestEventSequence() async throws(StoreError) -> UInt64 {
        try await store.latestEventSequence()
    }
}
