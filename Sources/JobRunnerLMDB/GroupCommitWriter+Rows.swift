import CLMDB
import Foundation
import JobRunnerCore
import JobRunnerJSON

/// The rows of one batch as the writer writes them, last change first.
///
/// Each row is encoded as it is written: a batch that opens a run of 100,000 jobs would
/// otherwise hold all their encoded records at once. A change that cannot be encoded aborts the
/// transaction, so a batch is stored whole or not at all. Within one transaction the last write
/// to a key is the one that lasts, so only it is written: a fast job's start and end often share
/// a batch.
struct BatchRows {
    private let tables: Tables
    /// The rows written so far, to skip the earlier writes of each.
    private var written: Set<Row>
    /// The runs to delete, once every row is written.
    private(set) var pruned: [String] = []
    /// Why a change could not be encoded (the transaction is then aborted).
    private(set) var failure: (any Error)?
    /// A job's or an attempt's row is written into these bytes, one row after another: the
    /// writer makes two rows or more per transition, and LMDB copies them into its pages.
    private var row = JSONWriter(capacity: 512)

    init(tables: Tables, count: Int) {
        self.tables = tables
        written = Set(minimumCapacity: min(count, 1 << 16))
    }

    /// Writes `change` unless a later change of the batch wrote its row. A new job's row is only
    /// looked up, not kept (a large run's opening has 100,000): nothing writes to a run before
    /// its opening, so no row of the batch that comes before it has its key.
    mutating func write(_ change: StoreChange, isNewJob: Bool, in txn: borrowing Transaction)
        throws(LMDBError)
    {
        switch change {
        case .deleteRun(let runID):
            pruned.append(runID)
            return
        case .recordEvents, .recordAnswers:
            // Only among the commit's events (``CommittedEvent/Batch``): no row.
            return
        default:
            break
        }
        let (dbi, key) = Self.place(of: change, in: tables)
        let place = Row(dbi: dbi, key: key)
        guard isNewJob ? !written.contains(place) : written.insert(place).inserted else { return }
        switch change {
        case .putJob(_, let job):
            row.clear()
            RecordJSON.encode(job, into: &row)
            try txn.put(dbi, key: key, value: row.bytes)
        case .putAttempt(_, let attempt):
            row.clear()
            RecordJSON.encode(attempt, into: &row)
            try txn.put(dbi, key: key, value: row.bytes)
        default:
            let bytes: [UInt8]?
            do {
                bytes = try Self.value(of: change)
            } catch {
                failure = error
                throw LMDBError(code: EINVAL, operation: "encoding a record")
            }
            if let bytes {
                try txn.put(dbi, key: key, value: bytes)
            } else {
                try txn.delete(dbi, key: key)
            }
        }
    }

    private static func place(of change: StoreChange, in tables: Tables) -> (MDB_dbi, [UInt8]) {
        switch change {
        case .putRun(let run): (tables.runs, StoreKey.run(run.id))
        case .setCurrentRun: (tables.meta, StoreKey.currentRun)
        case .putJob(let runID, let job):
            (tables.jobs, StoreKey.job(runID: runID, jobID: job.jobID, occurrence: job.occurrence))
        case .putAttempt(let runID, let attempt):
            (
                tables.attempts,
                StoreKey.attempt(
                    runID: runID, jobID: attempt.jobID, occurrence: attempt.occurrence, number: attempt.number
                )
            )
        case .putOutputs(let runID, let jobID, let occurrence, _):
            (tables.outputs, StoreKey.job(runID: runID, jobID: jobID, occurrence: occurrence))
        case .putPipeline(let pipeline): (tables.pipelines, StoreKey.pipeline(pipeline.name))
        case .putRequest(let runID, let request):
            (tables.requests, StoreKey.request(runID: runID, id: request.id))
        case .deleteRequest(let runID, let id): (tables.requests, StoreKey.request(runID: runID, id: id))
        case .putSchedule(let record): (tables.schedules, StoreKey.schedule(record.jobID))
        case .deleteRun(let runID): (tables.runs, StoreKey.run(runID))
        // Many rows, written one by one as `putJob` (`GroupCommitWriter.write`); never placed as one.
        case .putNewJobs(let jobs): (tables.jobs, StoreKey.runPrefix(jobs.runID))
        case .recordEvents, .recordAnswers: (tables.meta, [])
        }
    }

    /// The bytes to store for `change`, or nil to delete its row.
    private static func value(of change: StoreChange) throws -> [UInt8]? {
        switch change {
        case .putRun(let run): RecordJSON.encode(run)
        case .setCurrentRun(let id): Array(id.utf8)
        case .putJob(_, let job): RecordJSON.encode(job)
        case .putAttempt(_, let attempt): RecordJSON.encode(attempt)
        case .putOutputs(_, _, _, let outputs): RecordJSON.encode(outputs: outputs)
        case .putPipeline(let pipeline): RecordJSON.encode(pipeline)
        case .putRequest(_, let request): RecordJSON.encode(request)
        case .deleteRequest: nil
        case .putSchedule(let record): RecordJSON.encode(record)
        case .deleteRun: nil
        case .putNewJobs: throw StoreError(.io, "a run's new jobs are written one row at a time")
        case .recordEvents, .recordAnswers: throw StoreError(.io, "events and answers make no row")
        }
    }
}

/// A row of one table, to tell repeated writes in a batch apart.
struct Row: Hashable {
    let dbi: MDB_dbi
    let key: [UInt8]

    /// The key's bytes in one go: an array of bytes would be hashed byte by byte.
    func hash(into hasher: inout Hasher) {
        hasher.combine(dbi)
        key.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
