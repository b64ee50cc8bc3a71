import CLMDB
import Foundation
import JobRunnerCore

extension LMDBQueueStore {
    /// A run's overview, or nil when there is no such run: every job's state is found in its
    /// stored record's bytes (``RecordJSON/state(in:)``), and only the listed jobs' records are
    /// decoded, so a finished 100,000-job run is shown without decoding 100,000 records.
    /// - Parameters:
    ///   - listing: which jobs to read whole, by state and the run they are in.
    ///   - withOutputs: whether to read the listed jobs' outputs too.
    public func overview(
        runID: String, listing: @escaping @Sendable (JobState, RunRecord) -> Bool, withOutputs: Bool = false
    ) async throws(StoreError) -> RunOverview? {
        try reading { txn, tables, decoder in
            guard let runBytes = try txn.get(tables.runs, key: StoreKey.run(runID)) else { return nil }
            var overview = RunOverview(
                run: try Self.decodeRun(runBytes, decoder), states: [:], jobs: [:], outputs: [:])
            let prefix = StoreKey.runPrefix(runID)
            overview.states.reserveCapacity(overview.run.jobIDs.count)
            if listing(.succeeded, overview.run) { overview.jobs.reserveCapacity(overview.run.jobIDs.count) }
            // Asked once per state, not per job (a call copies the run record); an array, as a
            // state hashes its name.
            let listed = JobState.allCases.filter { listing($0, overview.run) }
            // When every job is listed (`--all`, `--json`), each record is read whole at once.
            let listsEvery = listed.count == JobState.allCases.count
            // The run's outputs, read first: most runs have none, and then no listed job needs
            // looking up.
            var storedOutputs: [[UInt8]: [UInt8]] = [:]
            if withOutputs {
                try txn.scanInPlace(tables.outputs, prefix: prefix) { key, value throws(LMDBError) in
                    storedOutputs[Array(key)] = Array(value)
                }
            }
            var withOutputsListed: [(key: [UInt8], jobID: String)] = []
            try txn.scanInPlace(tables.jobs, prefix: prefix) { key, value throws(LMDBError) in
                let rest = key[prefix.count...]
                let jobID = String(decoding: rest.prefix { $0 != StoreKey.separator }, as: UTF8.self)
                // The state alone, found in the bytes; the whole record only for a listed job
                // (and for a record not as `RecordJSON` writes it), read once.
                var record: JobRecord?
                let state: JobState
                if !listsEvery, let found = RecordJSON.state(in: value) {
                    state = found
                } else {
                    let job = try Self.decodeJob(value, decoder)
                    record = job
                    state = job.state
                }
                overview.states[jobID] = state
                guard listed.contains(state) else { return }
                if record == nil { record = try Self.decodeJob(value, decoder) }
                overview.jobs[jobID] = record
                if !storedOutputs.isEmpty { withOutputsListed.append((Array(key), jobID)) }
            }
            for (key, jobID) in withOutputsListed {
                guard let outputs = storedOutputs[key] else { continue }
                overview.outputs[jobID] = try Self.decode([String: String].self, outputs, decoder)
            }
            return overview
        }
    }
}
