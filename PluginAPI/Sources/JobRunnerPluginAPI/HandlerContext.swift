/// What a handler knows about the attempt it runs.
public struct HandlerContext<Parameters: Sendable>: Sendable {
    /// The job's id.
    public var jobID: String
    /// The run's id.
    public var runID: String
    /// The attempt's number, from 1.
    public var attempt: Int
    /// The job's `with:` parameters, decoded.
    public var parameters: Parameters
    /// Outputs of the jobs this one needs: job id, then key.
    public var outputs: [String: [String: String]]
    /// The job's working directory.
    public var workingDirectory: String
    /// Lines written here go to the attempt's log (`jobrunner logs JOB`).
    public var log: AttemptLog
    /// When the handler is called by a `notify:` hook (`plugin:` in a hook): the finished run it
    /// is about. Nil for a job's attempt.
    public var notification: PluginNotification?

    public init(
        jobID: String, runID: String, attempt: Int, parameters: Parameters,
        outputs: [String: [String: String]], workingDirectory: String, log: AttemptLog,
        notification: PluginNotification? = nil
    ) {
        self.jobID = jobID
        self.runID = runID
        self.attempt = attempt
        self.parameters = parameters
        self.outputs = outputs
        self.workingDirectory = workingDirectory
        self.log = log
        self.notification = notification
    }
}

/// How an attempt ended.
public enum HandlerResult: Sendable, Equatable {
    /// Done; `outputs` go to the jobs that need this one.
    case succeeded(outputs: [String: String] = [:])
    /// Failed: the retry policy decides whether another attempt comes.
    case failed(_ message: String, outputs: [String: String] = [:])
    /// Failed, asking to be tried again: `after` replaces the backoff before the next attempt
    /// (like `retry-after=` of a shell job), within the retry policy's attempts.
    case retry(after: Duration? = nil, _ message: String = "")
    /// Nothing to do: the job is `skipped` and the jobs that need it go on.
    case skipped(_ reason: String)

    /// `.succeeded` without outputs.
    public static var succeeded: HandlerResult { .succeeded() }
}
