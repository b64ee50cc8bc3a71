import Foundation

/// A `QueueStore` in memory: the twin of the LMDB store for fast unit tests, and the model a
/// store shared by many processes follows: it checks the fencing number of every owned commit
/// and refuses a stale claim, and it wakes the readers that follow its events as it commits.
public final class InMemoryQueueStore: QueueStore {
    private struct Contents {
        var currentRun: String?
        var runs: [String: RunRecord] = [:]
        var jobs: [String: [String: JobRecord]] = [:]
        var attempts: [String: [String: [Int: AttemptRecord]]] = [:]
        var outputs: [String: [String: [String: String]]] = [:]
        var pipelines: [String: PipelineRecord] = [:]
        var schedules: [String: ScheduleRecord] = [:]
        var requests: [String: [UInt64: OperatorRequest]] = [:]
        var commits = 0
        var runsReads = 0
        /// The latest claim granted: the only one whose commits are taken.
        var claim: StoreClaim?
        var fencing: UInt64 = 0
        /// The events, from `firstKept` on; those before it were let go, and are dropped from
        /// the array once as many as are kept (so each commit costs O(1), not a shift of all).
        var events: [CommittedEvent] = []
        var firstKept = 0
        var lastSequence: UInt64 = 0
        var eventWaiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    }

    private let contents = Locked(Contents())
    /// Held from a submission's commit to the end of its completion, so that completions run in
    /// the order the commits were made, whatever the threads; recursive, for a completion that
    /// submits again.
    private let ordering = NSRecursiveLock()

    public init() {}

    /// How many batches have been committed (each would be one transaction).
    public var commitCount: Int { contents.withLock { $0.commits } }
    /// How many times every run record was read (``runs()``).
    public var runsReadCount: Int { contents.withLock { $0.runsReads } }

    // MARK: Ownership and writing

    public func claim(owner: String) async throws(StoreError) -> StoreClaim {
        contents.withLock { state in
            state.fencing += 1
            let claim = StoreClaim(owner: owner, fencing: state.fencing)
            state.claim = claim
            return claim
        }
    }

    public func submit(
        _ changes: [StoreChange], under claim: StoreClaim,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        ordering.lock()
        defer { ordering.unlock() }
        let result: Result<Void, StoreError> = commit { state in
            guard state.claim == claim else { return .failure(claim.refused(current: state.claim)) }
            Self.apply(changes, to: &state)
            return .success(())
        }
        completion(result)
    }

    public func post(_ requests: [OperatorRequest], runID: String) async throws(StoreError) {
        commit { state in Self.apply(requests.map { .putRequest(runID: runID, $0) }, to: &state) }
    }

    public func prune(runs ids: [String]) async throws(StoreError) {
        commit { state in Self.apply(ids.map(StoreChange.deleteRun), to: &state) }
    }

    public func updatePipeline(_ name: String, _ change: @Sendable (inout PipelineRecord) -> Void)
        async throws(StoreError) -> PipelineRecord
    {
        commit { state in
            var record = state.pipelines[name] ?? PipelineRecord(name: name)
            change(&record)
            Self.apply([.putPipeline(record)], to: &state)
            return record
        }
    }

    /// Runs `body` as one commit, then wakes the readers waiting for events.
    private func commit<Result>(_ body: (inout Contents) -> Result) -> Result {
        let (result, waiters) = contents.withLock { state in
            let before = state.lastSequence
            let result = body(&state)
            guard state.lastSequence > before else { return (result, [CheckedContinuation<Void, Never>]()) }
            defer { state.eventWaiters = [:] }
            return (result, Array(state.eventWaiters.values))
        }
        for waiter in waiters { waiter.resume() }
        return result
    }

    private static func apply(_ changes: [StoreChange], to state: inout Contents) {
        state.commits += 1
        let now = Date()
        for change in changes {
            for event in CommittedEvent.changes(of: change) {
                state.lastSequence += 1
                state.events.append(
                    CommittedEvent(sequence: state.lastSequence, committedAt: now, change: event))
            }
            switch change {
            case .putRun(let run): state.runs[run.id] = run
            case .setCurrentRun(let id): state.currentRun = id
            case .putJob(let runID, let job): state.jobs[runID, default: [:]][job.jobID] = job
            case .putNewJobs(let jobs):
                for job in jobs { state.jobs[jobs.runID, default: [:]][job.jobID] = job }
            case .putAttempt(let runID, let attempt):
                state.attempts[runID, default: [:]][attempt.jobID, default: [:]][attempt.number] = attempt
            case .putOutputs(let runID, let jobID, _, let outputs):
                state.outputs[runID, default: [:]][jobID] = outputs
            case .putPipeline(let pipeline): state.pipelines[pipeline.name] = pipeline
            case .putSchedule(let record): state.schedules[record.jobID] = record
            case .deleteRun(let runID):
                state.runs[runID] = nil
                state.jobs[runID] = nil
                state.attempts[runID] = nil
                state.outputs[runID] = nil
                state.requests[runID] = nil
            case .putRequest(let runID, let request):
                state.requests[runID, default: [:]][request.id] = request
            case .deleteRequest(let runID, let id): state.requests[runID]?[id] = nil
            case .recordEvents, .recordAnswers: break
            }
        }
        let kept = Int(CommittedEvent.kept)
        state.firstKept = max(state.firstKept, state.events.count - kept)
        if state.firstKept >= kept {
            state.events.removeFirst(state.firstKept)
            state.firstKept = 0
        }
    }

    // MARK: Reading

    public func currentRunID() async throws(StoreError) -> String? {
        contents.withLock { $0.currentRun }
    }

    public func snapshot(runID: String) async throws(StoreError) -> RunSnapshot? {
        contents.withLock { state in
            guard let run = state.runs[runID] else { return nil }
            let attempts = (state.attempts[runID] ?? [:]).mapValues { byNumber in
                byNumber.keys.sorted().compactMap { byNumber[$0] }
            }
            return RunSnapshot(
                run: run, jobs: state.jobs[runID] ?? [:], attempts: attempts,
                outputs: state.outputs[runID] ?? [:])
        }
    }

    public func runs() async throws(StoreError) -> [RunRecord] {
        contents.withLock {
            $0.runsReads += 1
            return $0.runs.values.sorted { $0.id < $1.id }
        }
    }

    public func schedules() async throws(StoreError) -> [String: ScheduleRecord] {
        contents.withLock { $0.schedules }
    }

    public func pipelines() async throws(StoreError) -> [String: PipelineRecord] {
        contents.withLock { $0.pipelines }
    }

    public func requests(runID: String) async throws(StoreError) -> [OperatorRequest] {
        contents.withLock { ($0.requests[runID] ?? [:]).values.sorted { $0.id < $1.id } }
    }

    public func outputs(of jobs: [JobInRun]) async throws(StoreError) -> [JobInRun: [String: String]] {
        contents.withLock { state in
            var found: [JobInRun: [String: String]] = [:]
            for job in jobs {
                if let outputs = state.outputs[job.runID]?[job.jobID] { found[job] = outputs }
            }
            return found
        }
    }

    // MARK: Committed events

    public func events(after sequence: UInt64, limit: Int) async throws(StoreError) -> [CommittedEvent] {
        contents.withLock { state in
            guard state.firstKept < state.events.count, sequence < state.lastSequence else { return [] }
            let first = state.events[state.firstKept].sequence
            let start = state.firstKept + Int(max(sequence + 1, first) - first)
            return Array(state.events[start..<min(state.events.count, start + max(0, limit))])
        }
    }

    public func latestEventSequence() async throws(StoreError) -> UInt64 {
        contents.withLock { $0.lastSequence }
    }

    public func waitForEvents(after sequence: UInt64) async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = contents.withLock { state -> Bool in
                    if state.lastSequence > sequence || Task.isCancelled { return true }
                    state.eventWaiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            contents.withLock { $0.eventWaiters.removeValue(forKey: id) }?.resume()
        }
    }
}
