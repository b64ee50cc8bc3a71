import Foundation

/// One change to stored state. A batch of changes is committed atomically.
public enum StoreChange: Sendable, Hashable {
    case putRun(RunRecord)
    /// Makes a run the one `status`, `logs` and the next `run` look at first.
    case setCurrentRun(String)
    case putJob(runID: String, JobRecord)
    /// The first record of every job of a new run, made as it is written (``NewJobRecords``).
    case putNewJobs(NewJobRecords)
    case putAttempt(runID: String, AttemptRecord)
    case putOutputs(runID: String, jobID: String, occurrence: String, [String: String])
    case putPipeline(PipelineRecord)
    case putRequest(runID: String, OperatorRequest)
    case deleteRequest(runID: String, id: UInt64)
    /// Where a periodic job stands across runs (SPEC 5.8).
    case putSchedule(ScheduleRecord)
    /// Deletes a run and every row of it (jobs, attempts, outputs, requests): pruning.
    case deleteRun(String)
    /// The events (SPEC 5.10) this commit reports, as `--events` writes them: kept only among
    /// the commit's committed events (``CommittedEvent/Change/event(_:)``), no row of their own,
    /// so `GET /events` streams the same documents, from any process, and resumes them.
    case recordEvents([RunEvent])
    /// What became of the operator requests this commit takes (and deletes): kept only among its
    /// committed events, where the command that posted them reads the runner's answer.
    case recordAnswers([OperatorAnswer])
}

/// Everything stored about one run.
public struct RunSnapshot: Sendable, Hashable {
    public var run: RunRecord
    /// Job records by job id (one-shot jobs; periodic occurrences come with SPEC 5.8).
    public var jobs: [String: JobRecord]
    /// Attempts by job id, in attempt order.
    public var attempts: [String: [AttemptRecord]]
    /// Outputs by job id.
    public var outputs: [String: [String: String]]

    public init(
        run: RunRecord, jobs: [String: JobRecord] = [:], attempts: [String: [AttemptRecord]] = [:],
        outputs: [String: [String: String]] = [:]
    ) {
        self.run = run
        self.jobs = jobs
        self.attempts = attempts
        self.outputs = outputs
    }
}

/// Durable storage of runs, jobs, attempts, outputs and pipelines, and the stream of what was
/// committed.
///
/// **Ownership.** A run is written by its owner only: the runner that works on the store, or an
/// operator command that applies a request while no runner does. The owner takes a claim
/// (``claim(owner:)``) and makes every commit under it (``submit(_:under:completion:)``); the
/// store refuses a commit under any claim but the latest it granted, with
/// ``StoreError/Code/staleClaim``, and writes nothing of it. The writes that belong to nobody
/// need no claim: an operator's requests (``post(_:runID:)``), a pipeline's suspend count
/// (``updatePipeline(_:_:)``) and pruning finished runs (``prune(runs:)``).
///
/// **Commits.** An implementation may commit the changes of many submissions in one
/// transaction (group commit), but commits them in submission order and calls each completion
/// only once its changes are durable. Each commit also records what it changed as committed
/// events (``CommittedEvent``), numbered in commit order, in the same transaction.
///
/// **Reads** are asynchronous, so a store can be remote. Each read sees one committed state.
public protocol QueueStore: Sendable {
    // MARK: Ownership and writing

    /// Makes `owner` the one whose commits the store takes from now on: the claim returned has
    /// a fencing number above every earlier one, whose commits are refused from then on.
    ///
    /// Which process may ask is the business of the store's ``RunnerLock``: the LMDB store's
    /// callers hold the state directory's runner lock (or its operator lock, with no runner)
    /// first.
    /// - Parameter owner: who asks, in words for messages (`runner 4242`).
    func claim(owner: String) async throws(StoreError) -> StoreClaim

    /// Queues changes for commit under `claim`; `completion` runs once they are durable or failed
    /// to commit (``StoreError/Code/staleClaim`` when `claim` is not the latest granted: then
    /// nothing of them is written). Completions run in submission order.
    func submit(
        _ changes: [StoreChange], under claim: StoreClaim,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void)

    /// Stores operator requests for the run's runner, in one commit; no claim is needed (a
    /// request asks the owner, which applies it under its own claim and deletes it).
    func post(_ requests: [OperatorRequest], runID: String) async throws(StoreError)

    /// Deletes finished runs with every row of them (jobs, attempts, outputs, requests), in one
    /// commit; no claim is needed, as no runner writes to a finished run.
    func prune(runs ids: [String]) async throws(StoreError)

    /// Reads, changes and writes one pipeline record in one transaction (a suspend count must
    /// not lose an update to a concurrent one); returns the new record. No claim is needed.
    func updatePipeline(_ name: String, _ change: @Sendable (inout PipelineRecord) -> Void)
        async throws(StoreError) -> PipelineRecord

    // MARK: Reading

    /// The id of the current run, if any.
    func currentRunID() async throws(StoreError) -> String?

    /// A run's record alone, or nil when it does not exist.
    func run(id: String) async throws(StoreError) -> RunRecord?

    /// Everything stored about a run, or nil when it does not exist.
    func snapshot(runID: String) async throws(StoreError) -> RunSnapshot?

    /// Like ``snapshot(runID:)``, but `attempts` holds only the attempts without an outcome
    /// (those a runner left running): all that resuming a run reads of them.
    func resumableSnapshot(runID: String) async throws(StoreError) -> RunSnapshot?

    /// What resuming a run reads of it, its jobs' records kept as `plan`'s jobs; nil when the
    /// run does not exist. A final run's jobs are not read: it is not resumed.
    func resumableRun(runID: String, plan: RunPlan) async throws(StoreError) -> ResumableRun?

    /// What `status` reads of a run: every job's state, and the whole records (and outputs,
    /// when asked) of only the jobs `listing` picks; nil when there is no such run.
    func overview(
        runID: String, listing: @escaping @Sendable (JobState, RunRecord) -> Bool, withOutputs: Bool
    ) async throws(StoreError) -> RunOverview?

    /// All runs, oldest first.
    func runs() async throws(StoreError) -> [RunRecord]

    /// Persisted pipeline records by name.
    func pipelines() async throws(StoreError) -> [String: PipelineRecord]

    /// The periodic jobs' schedule records, by job id.
    func schedules() async throws(StoreError) -> [String: ScheduleRecord]

    /// Operator requests waiting for the run's runner, oldest first.
    func requests(runID: String) async throws(StoreError) -> [OperatorRequest]

    /// The stored outputs of each of these jobs that has some, in one read.
    func outputs(of jobs: [JobInRun]) async throws(StoreError) -> [JobInRun: [String: String]]

    // MARK: Committed events

    /// The committed events after `sequence`, oldest first, at most `limit` of them. The store
    /// keeps only the latest ones (``CommittedEvent/kept``): when the first one returned is not
    /// `sequence + 1`, those in between were let go.
    func events(after sequence: UInt64, limit: Int) async throws(StoreError) -> [CommittedEvent]

    /// The sequence number of the latest committed event; 0 before the first.
    func latestEventSequence() async throws(StoreError) -> UInt64

    /// Returns once events after `sequence` may have been committed, or the task is cancelled.
    /// A store that cannot hear commits made by other processes returns after a short while
    /// anyway, so its readers look again.
    func waitForEvents(after sequence: UInt64) async
}

/// A job of a run, as a key.
public struct JobInRun: Sendable, Hashable {
    public var runID: String
    public var jobID: String

    public init(runID: String, jobID: String) {
        self.runID = runID
        self.jobID = jobID
    }
}

extension QueueStore {
    /// Commits changes under `claim` and waits until they are durable.
    public func commit(_ changes: [StoreChange], under claim: StoreClaim) async throws(StoreError) {
        let result: Result<Void, StoreError> = await withCheckedContinuation { continuation in
            submit(changes, under: claim) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    /// Reads the whole snapshot and keeps its run record; a store that can read the record
    /// alone does.
    public func run(id: String) async throws(StoreError) -> RunRecord? {
        try await snapshot(runID: id)?.run
    }

    /// Reads the whole snapshot and keeps the open attempts; a store that can skip the others
    /// while reading does.
    public func resumableSnapshot(runID: String) async throws(StoreError) -> RunSnapshot? {
        guard var snapshot = try await snapshot(runID: runID) else { return nil }
        snapshot.attempts = snapshot.attempts.compactMapValues { attempts in
            let open = attempts.filter { $0.outcome == nil }
            return open.isEmpty ? nil : open
        }
        return snapshot
    }

    /// Reads the resumable snapshot and takes its records one by one; a store that can read
    /// records in part does.
    public func resumableRun(runID: String, plan: RunPlan) async throws(StoreError) -> ResumableRun? {
        guard let snapshot = try await resumableSnapshot(runID: runID) else { return nil }
        var resumable = ResumableRun(run: snapshot.run, plan: plan)
        resumable.attempts = snapshot.attempts
        resumable.outputs = snapshot.outputs
        guard !snapshot.run.state.isFinal else { return resumable }
        for record in snapshot.jobs.values { resumable.take(record) }
        return resumable
    }

    /// Reads the whole snapshot; a store that can find a job's state without reading its whole
    /// record does.
    public func overview(
        runID: String, listing: @escaping @Sendable (JobState, RunRecord) -> Bool, withOutputs: Bool
    ) async throws(StoreError) -> RunOverview? {
        guard let snapshot = try await snapshot(runID: runID) else { return nil }
        var overview = RunOverview(run: snapshot.run, states: [:], jobs: [:], outputs: [:])
        for (id, record) in snapshot.jobs {
            overview.states[id] = record.state
            guard listing(record.state, snapshot.run) else { continue }
            overview.jobs[id] = record
            if withOutputs, let outputs = snapshot.outputs[id] { overview.outputs[id] = outputs }
        }
        return overview
    }

    /// The current run's snapshot, if there is a current run.
    public func currentSnapshot() async throws(StoreError) -> RunSnapshot? {
        guard let id = try await currentRunID() else { return nil }
        return try await snapshot(runID: id)
    }
}
