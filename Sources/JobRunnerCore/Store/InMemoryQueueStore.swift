import Foundation
import Synchronization

/// A `QueueStore` in memory: the twin of the LMDB store for fast unit tests.
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
    }

    private let contents = Mutex(Contents())

    public init() {}

    /// How many batches have been committed (each would be one transaction).
    public var commitCount: Int { contents.withLock { $0.commits } }
    /// How many times every run record was read (``runs()``).
    public var runsReadCount: Int { contents.withLock { $0.runsReads } }

    public func submit(
        _ changes: [StoreChange], completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        contents.withLock { state in
            state.commits += 1
            for change in changes {
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
                }
            }
        }
        completion(.success(()))
    }

    public func currentRunID() throws(StoreError) -> String? {
        contents.withLock { $0.currentRun }
    }

    public func snapshot(runID: String) throws(StoreError) -> RunSnapshot? {
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

    public func runs() throws(StoreError) -> [RunRecord] {
        contents.withLock {
            $0.runsReads += 1
            return $0.runs.values.sorted { $0.id < $1.id }
        }
    }

    public func schedules() throws(StoreError) -> [String: ScheduleRecord] {
        contents.withLock { $0.schedules }
    }

    public func pipelines() throws(StoreError) -> [String: PipelineRecord] {
        contents.withLock { $0.pipelines }
    }

    public func requests(runID: String) throws(StoreError) -> [OperatorRequest] {
        contents.withLock { ($0.requests[runID] ?? [:]).values.sorted { $0.id < $1.id } }
    }

    public func updatePipeline(_ name: String, _ change: @Sendable (inout PipelineRecord) -> Void)
        throws(StoreError)
        -> PipelineRecord
    {
        contents.withLock { state in
            var record = state.pipelines[name] ?? PipelineRecord(name: name)
            change(&record)
            state.pipelines[name] = record
            state.commits += 1
            return record
        }
    }
}
