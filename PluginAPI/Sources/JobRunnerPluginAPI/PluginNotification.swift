/// What a `notify:` hook's handler is called about (SPEC 5.13): the finished run or occurrence,
/// as a shell hook's `JOBRUNNER_NOTIFY_*` variables tell it. In a request as `notify`; absent
/// from the requests of jobs.
public struct PluginNotification: Codable, Sendable, Equatable {
    /// The finished run's id (`JOBRUNNER_NOTIFY_RUN`).
    public var run: String
    /// How it ended: `succeeded` or `failed` (`JOBRUNNER_NOTIFY_STATE`).
    public var state: String
    /// The periodic job of an occurrence; empty for a run of one-shot jobs (`JOBRUNNER_NOTIFY_JOB`).
    public var job: String
    /// The failed, blocked and cancelled job ids (`JOBRUNNER_NOTIFY_FAILED`).
    public var failed: [String]
    /// A file holding the run's `status --json` (`JOBRUNNER_NOTIFY_SUMMARY`).
    public var summary: String

    public init(run: String, state: String, job: String, failed: [String], summary: String) {
        self.run = run
        self.state = state
        self.job = job
        self.failed = failed
        self.summary = summary
    }
}
