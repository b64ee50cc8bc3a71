/// What `status` reads of a run: every job's state, and the whole records of only the jobs it
/// lists (``QueueStore/overview(runID:listing:withOutputs:)``). The LMDB store finds each
/// state in a stored record's bytes, so a finished 100,000-job run is shown without decoding
/// 100,000 records.
public struct RunOverview: Sendable, Hashable {
    public var run: RunRecord
    /// Every job's state, by job id.
    public var states: [String: JobState]
    /// The records of the jobs asked for, by job id.
    public var jobs: [String: JobRecord]
    /// The outputs of the jobs asked for, when asked for.
    public var outputs: [String: [String: String]]

    public init(
        run: RunRecord, states: [String: JobState], jobs: [String: JobRecord],
        outputs: [String: [String: String]]
    ) {
        self.run = run
        self.states = states
        self.jobs = jobs
        self.outputs = outputs
    }
}
