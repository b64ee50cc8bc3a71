import Foundation
import JobRunnerCore

extension LMDBQueueStore {
    /// Reads a run to resume it in one pass over its rows in key order: each job row is read no
    /// further than its progress (``JobProgress``) and goes straight into the run's table, with no
    /// dictionary of 100,000 records made and dropped on the way. A row not as ``RecordJSON``
    /// writes it is read whole, by `JSONDecoder` if need be. Only the attempts without an
    /// outcome are read.
    public func resumableRun(runID: String, plan: RunPlan) throws(StoreError) -> ResumableRun? {
        let resumable: ResumableRun? = try reading { txn, tables, decoder -> ResumableRun? in
            guard let runBytes = try txn.get(tables.runs, key: StoreKey.run(runID)) else { return nil }
            var resumable = ResumableRun(run: try Self.decodeRun(runBytes, decoder), plan: plan)
            guard !resumable.run.state.isFinal else { return resumable }
            try txn.scanInPlace(tables.jobs, prefix: StoreKey.runPrefix(runID)) {
                _, value throws(LMDBError) in
                if let progress = RecordJSON.decodeWrittenJobProgress(value)
                    ?? RecordJSON.decodeJobProgress(value)
                {
                    resumable.take(progress)
                } else {
                    resumable.take(try Self.decodeJob(value, decoder))
                }
            }
            (resumable.attempts, resumable.outputs) = try Self.readAttemptsAndOutputs(
                txn, tables, decoder, runID: runID, openAttemptsOnly: true)
            return resumable
        }
        // A large run's pages were all read once; a resuming runner need not keep them mapped.
        if let resumable, !resumable.run.state.isFinal,
            resumable.run.jobIDs.count >= GroupCommitWriter.rowsThatRelease
        {
            environment.releaseMappedPages()
        }
        return resumable
    }
}
