import CLMDB
import Foundation
import JobRunnerCore
import JobRunnerJSON

/// A large run's opening, committed in parts that only its last one makes visible.
///
/// LMDB holds a transaction's dirty pages in memory until it commits, and keeps every freed
/// one for reuse until the environment closes: a 100,000-job opening in one transaction left
/// about 43 MB of them in the runner for the whole run. So the job rows of a new run are
/// written ahead, 4,096 a transaction, and the opening's own commit holds the rest: the run
/// record, the current-run pointer, the closing of a superseded run, the first attempts.
///
/// Why this is as safe as one commit, on a crash at any moment: every read of job rows starts
/// from a run record (`snapshot`, `overview`, pruning read a run's rows by its id, and only
/// after finding its record), and the run record is written only by the last commit, with the
/// current-run pointer. Before it commits, the rows written ahead are unreachable: every
/// reader, and the next runner, sees the store as it was before the opening. The meta row
/// `openingRun` names the run while its rows are written ahead; the last commit deletes it.
/// A runner that died in between leaves it, and the next large opening (only a runner, which
/// holds the state directory's lock, opens runs) first deletes the rows of the run it names
/// when that run has no record.
extension GroupCommitWriter {
    /// Job rows written ahead per transaction, and the fewest that make an opening large.
    static let openingChunk = 4096

    /// The new jobs of a run a batch opens with at least `openingChunk` of them, if any.
    func largeOpening(in batch: [Submission]) -> NewJobRecords? {
        for submission in batch {
            for case .putNewJobs(let jobs) in submission.changes where jobs.count >= Self.openingChunk {
                return jobs
            }
        }
        return nil
    }

    /// Writes the rows of a new run's jobs ahead, in key order, in transactions of
    /// `openingChunk` rows; a row a later change of `batch` writes (a first attempt's job) is
    /// left to it. In key order, each transaction adds to the end of the run's key range and
    /// touches few pages besides its own; in load order (job-9, job-10, …) each one would copy
    /// leaves all over the table. Writes nothing when the run is stored already. Returns
    /// whether it wrote: then the opening's own commit skips the new jobs.
    func writeAhead(_ jobs: NewJobRecords, batch: [Submission], tables: Tables) throws(LMDBError) -> Bool {
        let runID = jobs.runID
        let stored = try environment.read { txn throws(LMDBError) in
            try txn.get(tables.runs, key: StoreKey.run(runID)) != nil
        }
        if stored { return false }
        var later = Set<[UInt8]>()
        for submission in batch {
            for case .putJob(let owner, let job) in submission.changes where owner == runID {
                later.insert(StoreKey.job(runID: runID, jobID: job.jobID, occurrence: job.occurrence))
            }
        }
        // A row's key is `run \0 job \0 occurrence`, the occurrence the same (empty) for every
        // new job: keys sort as the job ids' bytes do (LMDB compares bytes). A record is made
        // only for a row that is written.
        let ids = jobs.indices.map { jobs.jobID($0) }
        let order = jobs.indices.sorted { ids[$0].utf8.lexicographicallyPrecedes(ids[$1].utf8) }
        var start = 0
        var row = JSONWriter(capacity: 512)
        while start < order.count {
            let chunk = order[start..<min(start + Self.openingChunk, order.count)]
            try environment.write { txn throws(LMDBError) in
                if start == 0 { try Self.markOpening(runID, in: txn, tables) }
                for position in chunk {
                    let key = StoreKey.job(runID: runID, jobID: ids[position], occurrence: "")
                    if later.contains(key) { continue }
                    let job = jobs[position]
                    assert(job.occurrence.isEmpty && job.jobID == ids[position])
                    row.clear()
                    RecordJSON.encode(job, into: &row)
                    try txn.put(tables.jobs, key: key, value: row.bytes)
                }
            }
            start += chunk.count
        }
        return true
    }

    /// Names `runID` as the run being opened, after deleting the rows of one a dead runner
    /// was opening (a run without a record).
    private static func markOpening(_ runID: String, in txn: borrowing Transaction, _ tables: Tables)
        throws(LMDBError)
    {
        if let stale = try txn.get(tables.meta, key: StoreKey.openingRun) {
            let staleID = String(decoding: stale, as: UTF8.self)
            if try txn.get(tables.runs, key: StoreKey.run(staleID)) == nil {
                try deleteRows(of: staleID, in: txn, tables)
            }
        }
        try txn.put(tables.meta, key: StoreKey.openingRun, value: Array(runID.utf8))
    }

    /// Deletes a run's jobs, attempts, outputs and requests: one key range in each table.
    static func deleteRows(of runID: String, in txn: borrowing Transaction, _ tables: Tables)
        throws(LMDBError)
    {
        for dbi in [tables.jobs, tables.attempts, tables.outputs, tables.requests] {
            var keys: [[UInt8]] = []
            try txn.scanInPlace(dbi, prefix: StoreKey.runPrefix(runID)) { key, _ in keys.append(Array(key)) }
            for key in keys { try txn.delete(dbi, key: key) }
        }
    }
}
