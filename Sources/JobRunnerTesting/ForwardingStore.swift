import JobRunnerCore

/// A test store that passes every read to the store it wraps: only the way it takes
/// submissions is its own (``FailingStore``, ``CrashingStore``).
public protocol ForwardingStore: QueueStore {
    /// The store that holds what was committed, and that reads go to.
    var inner: any QueueStore { get }
}

extension ForwardingStore {
    public func currentRunID() throws(StoreError) -> String? { try inner.currentRunID() }
    public func snapshot(runID: String) throws(StoreError) -> RunSnapshot? {
        try inner.snapshot(runID: runID)
    }
    public func runs() throws(StoreError) -> [RunRecord] { try inner.runs() }
    public func pipelines() throws(StoreError) -> [String: PipelineRecord] { try inner.pipelines() }
    public func schedules() throws(StoreError) -> [String: ScheduleRecord] { try inner.schedules() }
    public func requests(runID: String) throws(StoreError) -> [OperatorRequest] {
        try inner.requests(runID: runID)
    }
    public func updatePipeline(_ name: String, _ change: @Sendable (inout PipelineRecord) -> Void)
        throws(StoreError) -> PipelineRecord
    {
        try inner.updatePipeline(name, change)
    }
}
