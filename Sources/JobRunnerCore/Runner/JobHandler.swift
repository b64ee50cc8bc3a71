import Foundation

/// What a handler needs to run one attempt of one job.
public struct AttemptRequest: Sendable {
    public var runID: String
    public var job: JobDefinition
    public var attempt: Int
    /// Where the attempt's output goes (created by the handler).
    public var logPath: String
    /// The run's directory for attempt files: handlers name theirs after job and attempt.
    public var workDirectory: String
    /// Outputs of the jobs this one needs, by job id.
    public var neededOutputs: [String: [String: String]]
    /// Called once the attempt's process exists, with its pid, so a restarted runner can
    /// end it if this one dies.
    public var onSpawn: @Sendable (_ pid: Int32) -> Void
    /// For a `notify:` hook's plugin call: the finished run it is about; nil for a job's attempt.
    public var notification: HookNotification?

    public init(
        runID: String, job: JobDefinition, attempt: Int, logPath: String, workDirectory: String,
        neededOutputs: [String: [String: String]], onSpawn: @escaping @Sendable (Int32) -> Void = { _ in }
    ) {
        self.runID = runID
        self.job = job
        self.attempt = attempt
        self.logPath = logPath
        self.workDirectory = workDirectory
        self.neededOutputs = neededOutputs
        self.onSpawn = onSpawn
    }
}

/// What a `notify:` hook is told about the finished run (SPEC 5.13): a shell hook's
/// `JOBRUNNER_NOTIFY_*` variables, a plugin hook's request.
public struct HookNotification: Sendable, Hashable {
    public var run: String
    /// `succeeded` or `failed`.
    public var state: String
    /// The periodic job of an occurrence; empty for a run of one-shot jobs.
    public var job: String
    /// The failed, blocked and cancelled job ids.
    public var failed: [String]
    /// The file holding the run's `status --json`.
    public var summary: String

    public init(run: String, state: String, job: String, failed: [String], summary: String) {
        self.run = run
        self.state = state
        self.job = job
        self.failed = failed
        self.summary = summary
    }
}

/// How an attempt ended, as the handler saw it: its ``AttemptEnd`` (what happened and why) and
/// what it handed back.
public struct AttemptResult: Sendable, Hashable, Codable {
    /// At most this many bytes of outputs per job (SPEC 5.7), counted as a shell job writes
    /// them: each `key=value` and its line break. More fails the attempt, for every handler.
    public static let outputLimit = 1 << 20

    /// How it ended, with its reason.
    public var end: AttemptEnd
    /// The exit status of the job's process: the one ``end`` gives (an exit, a plugin's process
    /// that exited, 127 for a command that cannot start), or 0 for a shell job that exited 0 (a
    /// success, a skip, outputs refused); nil when no process of the job's exited.
    public var exitCode: Int32?
    /// The outputs it handed back (`JOBRUNNER_OUTPUT`, a plugin's `outputs`).
    public var outputs: [String: String]
    /// A delay that replaces the backoff before the next attempt (`retry-after=`).
    public var retryAfter: Duration?
    /// Why the attempt's log is not all it printed, when it is not: `its log could not be
    /// written: No space left on device (4096 bytes lost)`. Kept in the attempt's record.
    public var logProblem: String?

    /// A result that ended as `end` says.
    /// - Parameter exitCode: the exit status when `end` does not give it (a shell job's 0).
    public init(
        _ end: AttemptEnd, exitCode: Int32? = nil, outputs: [String: String] = [:],
        retryAfter: Duration? = nil
    ) {
        self.end = end
        self.exitCode = exitCode ?? end.exitCode
        self.outputs = outputs
        self.retryAfter = retryAfter
    }

    /// What the runner makes of it.
    public var outcome: AttemptOutcome { end.outcome }
    /// The signal that ended the job's process, when one did.
    public var signal: Int32? { end.signal }

    /// The bytes `outputs` take as `key=value` lines, the measure of ``outputLimit``.
    public static func size(of outputs: [String: String]) -> Int {
        outputs.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 2 }
    }

    /// A process that exited 0 with no outputs.
    public static let succeeded = AttemptResult(.succeeded, exitCode: 0)

    /// A process that exited with `exitCode`.
    public static func failed(exitCode: Int32) -> AttemptResult {
        AttemptResult(.exited(exitCode))
    }
}

/// Runs attempts. Task cancellation means the runner is stopping: the handler ends the
/// attempt's work and returns an `interrupted` result.
public protocol JobHandler: Sendable {
    func run(_ request: AttemptRequest) async -> AttemptResult

    /// Starts an attempt whose work runs on threads of the handler's own, without a task: the
    /// runner then spends no task, and no hop through the cooperative pool, on the attempt
    /// (20,000 quick in-process plugin calls: each task cost about as much as the call).
    /// `ended` is called exactly once, from any thread, possibly before `start` returns.
    /// Returns how to end the attempt early (a stop: it ends `interrupted`, as `run` does when
    /// its task is cancelled), or nil when this handler has no such way for `request`: then
    /// `ended` is never called and the runner calls `run` in a task.
    func start(_ request: AttemptRequest, ended: @escaping @Sendable (AttemptResult) -> Void) -> AttemptStop?
}

extension JobHandler {
    public func start(_ request: AttemptRequest, ended: @escaping @Sendable (AttemptResult) -> Void)
        -> AttemptStop?
    {
        nil
    }
}

/// Ends an attempt started by ``JobHandler/start(_:ended:)`` early.
public struct AttemptStop: Sendable {
    private let body: @Sendable () -> Void

    public init(_ body: @escaping @Sendable () -> Void) { self.body = body }

    /// Ends the attempt as `interrupted` unless it has ended already; its `ended` is called.
    public func callAsFunction() { body() }
}

/// An attempt a dead runner left running: what is known to find its processes.
public struct Orphan: Sendable, Hashable {
    public var runID: String
    public var jobID: String
    public var attempt: Int
    /// The recorded process (group leader), when the runner lived long enough to store it.
    public var pid: Int32?
    /// The recorded start time of `pid`, which tells a reused pid apart.
    public var startTime: UInt64?

    public init(runID: String, jobID: String, attempt: Int, pid: Int32? = nil, startTime: UInt64? = nil) {
        self.runID = runID
        self.jobID = jobID
        self.attempt = attempt
        self.pid = pid
        self.startTime = startTime
    }
}

/// A constraint's `satisfy` under way, as its runner records it while it runs (in
/// ``LogLayout/satisfyProcess(in:runID:constraint:)``): a runner that starts after that one
/// died ends it before it may start its own, one `satisfy` at a time (SPEC 5.6, 5.9).
public struct SatisfyProcess: Sendable, Hashable {
    /// The `satisfy`'s shell, which leads its process group.
    public var pid: Int32
    /// The start time of `pid`, which tells a reused pid apart.
    public var startTime: UInt64?

    public init(pid: Int32, startTime: UInt64?) {
        self.pid = pid
        self.startTime = startTime
    }

    /// Reads it as ``recorded`` writes it: a first line `PID STARTTIME` (`-` when unknown); nil
    /// for any other text. Only the first line counts.
    public init?(recorded text: String) {
        let line = text.split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
        let fields = line.split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, let pid = Int32(fields[0]), pid > 1 else { return nil }
        self.pid = pid
        if fields[1] == "-" {
            startTime = nil
        } else if let time = UInt64(fields[1]) {
            startTime = time
        } else {
            return nil
        }
    }

    /// The line its record holds.
    public var recorded: String { "\(pid) \(startTime.map(String.init) ?? "-")\n" }
}

/// Ends processes that a dead runner left behind (SPEC 5.9).
public protocol OrphanTerminator: Sendable {
    /// Terminates the process groups of an attempt that a dead runner left running.
    func terminate(_ orphan: Orphan) async
    /// Terminates the process group of a constraint's `satisfy` that a dead runner left
    /// running, unless its pid now belongs to another process; returns once it is gone.
    func terminate(_ satisfy: SatisfyProcess) async
    /// Terminates the process groups of every attempt a dead runner left running: as each
    /// one alone would, but an implementation may look for them all at once.
    func terminate(_ orphans: [Orphan]) async
    /// The start time of a live process, to record beside its pid.
    func startTime(of pid: Int32) -> UInt64?
}

extension OrphanTerminator {
    public func terminate(_ orphans: [Orphan]) async {
        for orphan in orphans { await terminate(orphan) }
    }
}
