/// A store that passes every read, claim and unowned write to the store it wraps: only the way
/// it takes submissions is its own (the dashboard's `TimedStore`, which times commits; the
/// tests' `FailingStore` and `CrashingStore`).
public protocol ForwardingStore: QueueStore {
    /// The store that holds what was committed, and that reads go to.
    var inner: any QueueStore { get }
}

extension ForwardingStore {
    public func claim(owner: String) async throws(StoreError) -> StoreClaim {
        try await inner.claim(owner: owner)
    }
    public func post(_ requests: [OperatorRequest], runID: String) async throws(StoreError) {
        try await inner.post(requests, runID: runID)
    }
    public func prune(runs ids: [String]) async throws(StoreError) { try await inner.prune(runs: ids) }
    public func updatePipeline(_ name: String, _ change: @Sendable (inout PipelineRecord) -> Void)
        async throws(StoreError) -> PipelineRecord
    {
        try await inner.updatePipeline(name, change)
    }
    public func currentRunID() async throws(StoreError) -> String? { try await inner.currentRunID() }
    public func run(id: String) async throws(StoreError) -> RunRecord? { try await inner.run(id: id) }
    public func snapshot(runID: String) async throws(StoreError) -> RunSnapshot? {
        try await inner.snapshot(runID: runID)
    }
    public func resumableSnapshot(runID: String) async throws(StoreError) -> RunSnapshot? {
        try await inner.resumableSnapshot(runID: runID)
    }
    public func resumableRun(runID: String, plan: RunPlan) async throws(StoreError) -> ResumableRun? {
        try await inner.resumableRun(runID: runID, plan: plan)
    }
    public func overview(
        runID: String, listing: @escaping @Sendable (JobState, RunRecord) -> Bool, withOutputs: Bool
    ) async throws(StoreError) -> RunOverview? {
        try await inner.overview(runID: runID, listing: listing, withOutputs: withOutputs)
    }
    public func runs() async throws(StoreError) -> [RunRecord] { try await inner.runs() }
    public func pipelines() async throws(StoreError) -> [String: PipelineRecord] {
        try await inner.pipelines()
    }
    public func schedules() async throws(StoreError) -> [String: ScheduleRecord] {
        try await inner.schedules()
    }
    public func requests(runID: String) async throws(StoreError) -> [OperatorRequest] {
        try await inner.requests(runID: runID)
    }
    public func outputs(of jobs: [JobInRun]) async throws(StoreError) -> [JobInRun: [String: String]] {
        try await inner.outputs(of: jobs)
    }
    public func events(after sequence: UInt64, limit: Int) async throws(StoreError) -> [CommittedEvent] {
        try await inner.events(after: sequence, limit: limit)
    }
    public func latestEventSequence() async throws(StoreError) -> UInt64 {
        try await inner.latestEventSequence()
    }
    public func waitForEvents(after sequence: UInt64) async { await inner.waitForEvents(after: sequence) }
}
