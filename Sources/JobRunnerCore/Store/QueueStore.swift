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

/// Durable storage of runs, jobs, attempts, outputs and pipelines.
///
/// Writers call ``submit(_:completion:)``; an implementation may commit the changes of many
/// submissions in one transaction (group commit), but commits them in submission order and
/// calls each completion only once its changes are durable.
public protocol QueueStore: Sendable {
    /// Queues changes for commit; `completion` runs once they are durable or failed to commit.
    /// Completions run in submission order.
    func submit(_ changes: [StoreChange], completion: @escaping @Sendable (Result<Void, StoreError>) -> Void)

    /// The id of the current run, if any.
    func currentRunID() throws(StoreError) -> String?

    /// Everything stored about a run, or nil when it does not exist.
    func snapshot(runID: String) throws(StoreError) -> RunSnapshot?

    /// Like ``snapshot(runID:)``, but `attempts` holds only the attempts without an outcome
    /// (those a runner left running): all that resuming a run reads of them.
    func resumableSnapshot(runID: String) throws(StoreError) -> RunSnapshot?

    /// What resuming a run reads of it, its jobs' records kept as `plan`'s jobs; nil when the
    /// run does not exist. A final run's jobs are not read: it is not resumed.
    func resumableRun(runID: String, plan: RunPlan) throws(StoreError) -> ResumableRun?

    /// All runs, oldest first.
    func runs() throws(StoreError) -> [RunRecord]

    /// Persisted pipeline records by name.
    func pipelines() throws(StoreError) -> [String: PipelineRecord]

    /// The periodic jobs' schedule records, by job id.
    func schedules() throws(StoreError) -> [String: ScheduleRecord]

    /// Operator requests waiting for the run's runner, oldest first.
    func requests(runID: String) throws(StoreError) -> [OperatorRequest]

    /// Reads, changes and writes one pipeline record in one transaction (a suspend count must
    /// not lose an update to a concurrent one); returns the new record.
    func updatePipeline(_ name: String, _ change: @Sendable (inout PipelineRecord) -> Void) throws(StoreError)
        -> PipelineRecord
}

extension QueueStore {
    /// Commits changes and waits until they are durable.
    public func commit(_ changes: [StoreChange]) async throws(StoreError) {
        let result: Result<Void, StoreError> = await withCheckedContinuation { continuation in
            submit(changes) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    /// Reads the whole snapshot and keeps the open attempts; a store that can skip the others
    /// while reading does.
    public func resumableSnapshot(runID: String) throws(StoreError) -> RunSnapshot? {
        guard var snapshot = try snapshot(runID: runID) else { return nil }
        snapshot.attempts = snapshot.attempts.compactMapValues { attempts in
            let open = attempts.filter { $0.outcome == nil }
            return open.isEmpty ? nil : open
        }
        return snapshot
    }

    /// Reads the resumable snapshot and takes its records one by one; a store that can read
    /// records in part does.
    public func resumableRun(runID: String, plan: RunPlan) throws(StoreError) -> ResumableRun? {
        guard let snapshot = try resumableSnapshot(runID: runID) else { return nil }
        var resumable = ResumableRun(run: snapshot.run, plan: plan)
        resumable.attempts = snapshot.attempts
        resumable.outputs = snapshot.outputs
        guard !snapshot.run.state.isFinal else { return resumable }
        for record in snapshot.jobs.values { resumable.take(record) }
        return resumable
    }

    /// The current run's snapshot, if there is a current run.
    public func currentSnapshot() throws(StoreError) -> RunSnapshot? {
        guard let id = try currentRunID() else { return nil }
        return try snapshot(runID: id)
    }
}

/// A failure of the state directory or its database. Always reported with exit status 3.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// Another runner holds the state directory.
        case locked
        /// The state path cannot be used as a directory (a file, no permission, …).
        case unusable
        /// The database is damaged.
        case corrupt
        /// The database was written by a newer jobrunner.
        case newerSchema
        /// A read or write failed.
        case io
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
