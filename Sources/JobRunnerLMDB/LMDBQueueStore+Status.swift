import CLMDB
import Foundation
import JobRunnerCore

/// What `status` reads of a run: every job's state from the `jobStates` index, and the whole
/// records of only the jobs it lists. A finished 100,000-job run is shown without decoding
/// 100,000 records.
public struct RunOverview: Sendable, Hashable {
    public var run: RunRecord
    /// Every job's state, by job id.
    public var states: [String: JobState]
    /// The records of the jobs asked for, by job id.
    public var jobs: [String: JobRecord]
    /// The outputs of the jobs asked for, when asked for.
    public var outputs: [String: [String: String]]
}

extension LMDBQueueStore {
    /// A run's overview, or nil when there is no such run.
    /// - Parameters:
    ///   - listing: which jobs to read whole, by state and the run they are in.
    ///   - withOutputs: whether to read the listed jobs' outputs too.
    public func overview(runID: String, listing: (JobState, RunRecord) -> Bool, withOutputs: Bool = false)
        throws(StoreError) -> RunOverview?
    {
        try reading { txn, tables, decoder in
            guard let runBytes = try txn.get(tables.runs, key: StoreKey.run(runID)) else { return nil }
            var overview = RunOverview(
                run: try decoder.decode(RunRecord.self, from: Data(runBytes)), states: [:], jobs: [:],
                outputs: [:])
            let prefix = StoreKey.runPrefix(runID)
            var listedKeys: [[UInt8]] = []
            try txn.scanInPlace(tables.jobStates, prefix: prefix) { key, value throws(LMDBError) in
                let rest = key[prefix.count...]
                let jobID = String(decoding: rest.prefix { $0 != StoreKey.separator }, as: UTF8.self)
                guard let state = JobState(rawValue: String(decoding: value, as: UTF8.self)) else {
                    throw LMDBError(code: MDB_CORRUPTED, operation: "reading the state of job \(jobID)")
                }
                overview.states[jobID] = state
                if listing(state, overview.run) { listedKeys.append(Array(key)) }
            }
            for key in listedKeys {
                guard let bytes = try txn.get(tables.jobs, key: key) else { continue }
                let job = try bytes.withUnsafeBytes { raw throws(LMDBError) in
                    try Self.decodeJob(raw, decoder)
                }
                overview.jobs[job.jobID] = job
                if withOutputs, let outputs = try txn.get(tables.outputs, key: key) {
                    overview.outputs[job.jobID] = try Self.decode([String: String].self, outputs, decoder)
                }
            }
            return overview
        }
    }
}
