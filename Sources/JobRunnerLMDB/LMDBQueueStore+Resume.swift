import Foundation
import JobRunnerCore

/// The rows of a run that resuming it reads, read before the plan they go into exists
/// (``LMDBQueueStore/readAhead()``), and the transaction that read them.
struct RowsReadAhead: Sendable {
    let transaction: Int
    let run: RunRecord
    let progress: [JobProgress]
    let attempts: [String: [AttemptRecord]]
    let outputs: [String: [String: String]]
}

extension LMDBQueueStore {
    /// Reads a run to resume it in one pass over its rows in key order: each job row is read no
    /// further than its progress (``JobProgress``) and goes straight into the run's table, with no
    /// dictionary of 100,000 records made and dropped on the way. A row not as ``RecordJSON``
    /// writes it is read whole, by `JSONDecoder` if need be. Only the attempts without an
    /// outcome are read. Rows read ahead (``readAhead()``) are taken instead when nothing was
    /// committed since they were read.
    public func resumableRun(runID: String, plan: RunPlan) async throws(StoreError) -> ResumableRun? {
        let ahead = rowsReadAhead.withLock { rows in
            defer { rows = nil }
            return rows
        }
        let resumable: ResumableRun? = try reading { txn, tables, decoder -> ResumableRun? in
            if let ahead, ahead.run.id == runID, ahead.transaction == txn.id {
                var resumable = ResumableRun(run: ahead.run, plan: plan)
                for progress in ahead.progress { resumable.take(progress) }
                (resumable.attempts, resumable.outputs) = (ahead.attempts, ahead.outputs)
                return resumable
            }
            guard let runBytes = try txn.get(tables.runs, key: StoreKey.run(runID)) else { return nil }
            var resumable = ResumableRun(run: try Self.decodeRun(runBytes, decoder), plan: plan)
            guard !resumable.run.state.isFinal else { return resumable }
            try Self.scanProgress(txn, tables, decoder, runID: runID) { resumable.take($0) }
            (resumable.attempts, resumable.outputs) = try Self.readAttemptsAndOutputs(
                txn, tables, decoder, runID: runID, openAttemptsOnly: true)
            return resumable
        }
        // A large run's pages were all read once; a resuming runner need not keep them mapped.
        if ahead == nil, let resumable, !resumable.run.state.isFinal,
            resumable.run.jobIDs.count >= GroupCommitWriter.rowsThatRelease
        {
            environment.releaseMappedPages()
        }
        return resumable
    }

    /// Reads the rows that resuming the current run would read, before the job files are
    /// loaded: a runner opens the store while it loads them, and a resumed run of 100,000 jobs
    /// starts sooner when its rows were read meanwhile. ``resumableRun(runID:plan:)`` takes
    /// them if nothing was committed in between, else reads again. Does nothing when there is
    /// no current run or it is final; a failure is left for that later read to report.
    public func readAhead() {
        let rows = try? reading { txn, tables, decoder -> RowsReadAhead? in
            guard let current = try txn.get(tables.meta, key: StoreKey.currentRun),
                let runBytes = try txn.get(
                    tables.runs, key: StoreKey.run(String(decoding: current, as: UTF8.self)))
            else { return nil }
            let run = try Self.decodeRun(runBytes, decoder)
            guard !run.state.isFinal else { return nil }
            var progress: [JobProgress] = []
            progress.reserveCapacity(run.jobIDs.count)
            try Self.scanProgress(txn, tables, decoder, runID: run.id) { progress.append($0) }
            let (attempts, outputs) = try Self.readAttemptsAndOutputs(
                txn, tables, decoder, runID: run.id, openAttemptsOnly: true)
            return RowsReadAhead(
                transaction: txn.id, run: run, progress: progress, attempts: attempts, outputs: outputs)
        }
        guard let rows = rows ?? nil else { return }
        if rows.progress.count >= GroupCommitWriter.rowsThatRelease { environment.releaseMappedPages() }
        rowsReadAhead.withLock { $0 = rows }
    }

    /// Each job row of a run, read as far as its progress.
    private static func scanProgress(
        _ txn: borrowing Transaction, _ tables: Tables, _ decoder: JSONDecoder, runID: String,
        _ take: (JobProgress) -> Void
    ) throws(LMDBError) {
        try txn.scanInPlace(tables.jobs, prefix: StoreKey.runPrefix(runID)) { _, value throws(LMDBError) in
            if let progress = RecordJSON.decodeWrittenJobProgress(value)
                ?? RecordJSON.decodeJobProgress(value)
            {
                take(progress)
            } else {
                take(JobProgress(try Self.decodeJob(value, decoder)))
            }
        }
    }
}
