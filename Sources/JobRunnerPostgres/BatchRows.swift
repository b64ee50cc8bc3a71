import Foundation
import JobRunnerCore
import Logging
import PostgresNIO

/// The rows one transaction writes for a batch of changes, each table's as one array per
/// column: the last write to a row in the batch is the only one kept (a fast job's start and
/// end often share a batch, and `INSERT … ON CONFLICT DO UPDATE` may touch a row once per
/// statement). Deleting a run drops the writes to its rows made before it in the batch; writes
/// after it are made after the delete.
struct BatchRows {
    private struct JobKey: Hashable {
        let run: String, job: String, occurrence: String
    }
    private struct AttemptKey: Hashable {
        let job: JobKey, number: Int
    }
    private struct RequestKey: Hashable {
        let run: String, id: UInt64
    }

    private var currentRun: String?
    private var runs: [String: String] = [:]
    private var jobs: [JobKey: (state: String, record: String)] = [:]
    private var attempts: [AttemptKey: (open: Bool, record: String)] = [:]
    private var outputs: [JobKey: String] = [:]
    private var pipelines: [String: String] = [:]
    /// nil: delete the request.
    private var requests: [RequestKey: String?] = [:]
    private var schedules: [String: String] = [:]
    private var deletedRuns: Set<String> = []
    private(set) var events: CommittedEvent.Batch
    private let encoder = JSONEncoder()

    init(committedAt date: Date) {
        events = CommittedEvent.Batch(committedAt: date)
    }

    /// Takes one change, after the ones taken before it.
    mutating func add(_ change: StoreChange) throws {
        events.add(change)
        switch change {
        case .putRun(let run): runs[run.id] = try text(run)
        case .setCurrentRun(let id): currentRun = id
        case .putJob(let runID, let job): try put(job, runID: runID)
        case .putNewJobs(let new):
            for job in new { try put(job, runID: new.runID) }
        case .putAttempt(let runID, let attempt):
            let key = AttemptKey(
                job: JobKey(run: runID, job: attempt.jobID, occurrence: attempt.occurrence),
                number: attempt.number)
            attempts[key] = (attempt.outcome == nil, try text(attempt))
        case .putOutputs(let runID, let jobID, let occurrence, let values):
            outputs[JobKey(run: runID, job: jobID, occurrence: occurrence)] = try text(values)
        case .putPipeline(let pipeline): pipelines[pipeline.name] = try text(pipeline)
        case .putRequest(let runID, let request):
            requests[RequestKey(run: runID, id: request.id)] = .some(try text(request))
        case .deleteRequest(let runID, let id): requests[RequestKey(run: runID, id: id)] = .some(nil)
        case .putSchedule(let record): schedules[record.jobID] = try text(record)
        case .deleteRun(let runID):
            deletedRuns.insert(runID)
            runs[runID] = nil
            jobs = jobs.filter { $0.key.run != runID }
            attempts = attempts.filter { $0.key.job.run != runID }
            outputs = outputs.filter { $0.key.run != runID }
            requests = requests.filter { $0.key.run != runID }
        case .recordEvents, .recordAnswers:
            // No row of their own: kept only among the commit's events (added above).
            break
        }
    }

    private mutating func put(_ job: JobRecord, runID: String) throws {
        jobs[JobKey(run: runID, job: job.jobID, occurrence: job.occurrence)] = (
            job.state.rawValue, try text(job)
        )
    }

    private func text<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Writes the rows on `connection`, inside the caller's transaction.
    func write(on connection: PostgresConnection, logger: Logger) async throws {
        func run(_ sql: String, _ bind: (inout PostgresBindings) -> Void) async throws {
            var binds = PostgresBindings()
            bind(&binds)
            try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        }
        if !deletedRuns.isEmpty {
            let ids = Array(deletedRuns)
            for statement in SQL.deleteRuns { try await run(statement) { $0.append(ids) } }
        }
        if let currentRun {
            try await run(SQL.putMeta) {
                $0.append("currentRun")
                $0.append(currentRun)
            }
        }
        if !runs.isEmpty {
            try await run(SQL.putRuns) {
                $0.append(Array(runs.keys))
                $0.append(Array(runs.values))
            }
        }
        if !jobs.isEmpty {
            let keys = Array(jobs.keys)
            try await run(SQL.putJobs) {
                $0.append(keys.map(\.run))
                $0.append(keys.map(\.job))
                $0.append(keys.map(\.occurrence))
                $0.append(keys.map { jobs[$0]?.state ?? "" })
                $0.append(keys.map { jobs[$0]?.record ?? "" })
            }
        }
        if !attempts.isEmpty {
            let keys = Array(attempts.keys)
            try await run(SQL.putAttempts) {
                $0.append(keys.map(\.job.run))
                $0.append(keys.map(\.job.job))
                $0.append(keys.map(\.job.occurrence))
                $0.append(keys.map { Int32(clamping: $0.number) })
                $0.append(keys.map { attempts[$0]?.open ?? false })
                $0.append(keys.map { attempts[$0]?.record ?? "" })
            }
        }
        if !outputs.isEmpty {
            let keys = Array(outputs.keys)
            try await run(SQL.putOutputs) {
                $0.append(keys.map(\.run))
                $0.append(keys.map(\.job))
                $0.append(keys.map(\.occurrence))
                $0.append(keys.map { outputs[$0] ?? "{}" })
            }
        }
        if !pipelines.isEmpty {
            try await run(SQL.putPipelines) {
                $0.append(Array(pipelines.keys))
                $0.append(Array(pipelines.values))
            }
        }
        let puts = requests.compactMap { key, record in record.map { (key, $0) } }
        if !puts.isEmpty {
            try await run(SQL.putRequests) {
                $0.append(puts.map(\.0.run))
                $0.append(puts.map { Int64(bitPattern: $0.0.id) })
                $0.append(puts.map(\.1))
            }
        }
        let deletes = requests.filter { $0.value == nil }.map(\.key)
        if !deletes.isEmpty {
            try await run(SQL.deleteRequests) {
                $0.append(deletes.map(\.run))
                $0.append(deletes.map { Int64(bitPattern: $0.id) })
            }
        }
        if !schedules.isEmpty {
            try await run(SQL.putSchedules) {
                $0.append(Array(schedules.keys))
                $0.append(Array(schedules.values))
            }
        }
    }
}
