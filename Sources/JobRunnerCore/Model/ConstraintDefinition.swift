/// A named precondition (SPEC 5.6): `check` says whether it holds; `satisfy` makes it hold.
public struct ConstraintDefinition: Sendable, Hashable {
    public var name: String
    /// A shell command; exit 0 means satisfied.
    public var check: String
    /// A shell command that runs when `check` fails, once at a time, for every job waiting.
    public var satisfy: String
    /// The longest `satisfy` (and `check`) may run; expiry is a failure.
    public var timeout: Duration
    /// The directory of the file that declares it; both commands run there.
    public var workingDirectory: String

    public static let defaultTimeout = Duration.seconds(60)

    public init(
        name: String, check: String, satisfy: String, timeout: Duration = ConstraintDefinition.defaultTimeout,
        workingDirectory: String = "."
    ) {
        self.name = name
        self.check = check
        self.satisfy = satisfy
        self.timeout = timeout
        self.workingDirectory = workingDirectory
    }
}

/// How a `satisfy` ended.
public enum SatisfyOutcome: Sendable, Hashable {
    case satisfied
    /// Failed or timed out; the last line of its output, to quote in the jobs' reason.
    case failed(lastLine: String)
}

/// Runs constraint commands for the runner.
public protocol ConstraintRunner: Sendable {
    /// Whether `check` exits 0.
    func check(_ constraint: ConstraintDefinition) async -> Bool
    /// Runs `satisfy`.
    func satisfy(_ constraint: ConstraintDefinition) async -> SatisfyOutcome
    /// Runs `satisfy` and keeps its output in the file at `logPath` (replacing an earlier one),
    /// so `jobrunner logs` can show why a job failed on it. While it runs, the file at
    /// `processPath` holds its ``SatisfyProcess``, so that a runner that starts after this one
    /// died can end it (SPEC 5.9).
    func satisfy(_ constraint: ConstraintDefinition, logPath: String, processPath: String) async
        -> SatisfyOutcome
}

extension ConstraintRunner {
    /// Runners that keep no output and start no process just run `satisfy`.
    public func satisfy(_ constraint: ConstraintDefinition, logPath: String, processPath: String) async
        -> SatisfyOutcome
    {
        await satisfy(constraint)
    }
}
