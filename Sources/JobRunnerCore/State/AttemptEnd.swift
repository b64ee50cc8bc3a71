import Foundation

/// How an attempt ended and why: the value every handler returns (in ``AttemptResult``) and the
/// runner records, whichever way the attempt ran (a shell job's process, an in-process plugin
/// call, a call on a plugin's worker, a plugin's process of its own).
///
/// The runner decides on the case (``outcome``, ``exitCode``); the reason is put in words in one
/// place, ``words``, for the attempt's record, events and `status`. Nothing reads the words back.
public enum AttemptEnd: Sendable, Hashable, Codable {
    /// The work succeeded: exit 0, or a plugin's `succeeded`.
    case succeeded
    /// The job skipped itself (a `skip=` line, a plugin's `skipped`), saying why; empty when it
    /// gave no reason.
    case skipped(String)
    /// The job's process exited with this non-zero status (75, EX_TEMPFAIL: a temporary failure).
    case exited(Int32)
    /// A signal the runner did not send ended the job's process.
    case signalled(Int32)
    /// The attempt outlived its `timeout`, this long, and was ended (``Teardown``).
    case timedOut(after: Duration)
    /// The runner ended the attempt before it ended by itself, or found it so.
    case interrupted(Interruption)
    /// The process that ran a plugin's handler apart from the runner ended before it answered.
    case crashed(PluginCrash)
    /// The plugin answered `failed` with this message; empty when it gave none.
    case pluginFailed(String)
    /// The plugin answered `retry` with this message; empty when it gave none.
    case pluginRetry(String)
    /// The work ended, but what it handed back cannot be taken.
    case refused(Refusal)
    /// The attempt's work could not be started.
    case cannotStart(StartFailure)

    /// Why the runner ended an attempt that had not ended by itself.
    public enum Interruption: Sendable, Hashable, Codable {
        /// The runner stopped it: a clean stop, or the end of a run that no longer needs it.
        case runnerStopped
        /// The runner stopped before the attempt's work was started.
        case runnerStoppedBeforeStart
        /// An operator's command found the attempt's runner gone.
        case runnerGone
        /// A runner found the attempt recorded running by a runner that died.
        case runnerDied
        /// An operator's `cancel` or `skip` ended it.
        case byOperator(OperatorRequest.Kind)
    }

    /// Which process ran a plugin's handler apart from the runner.
    public enum PluginProcess: Sendable, Hashable, Codable {
        /// A persistent worker (`isolation: process`).
        case worker
        /// A process of the attempt's own (`isolation: process-per-attempt`).
        case perAttempt
    }

    /// How a plugin's process ended before it answered.
    public struct PluginCrash: Sendable, Hashable, Codable {
        /// How its process ended.
        public enum Death: Sendable, Hashable, Codable {
            /// It exited with this status.
            case exited(Int32)
            /// This signal ended it (a crash: SIGSEGV, SIGILL from a Swift trap, SIGABRT…).
            case signalled(Int32)
        }

        /// The process.
        public var process: PluginProcess
        /// How it ended.
        public var death: Death
        /// Whether it ended while it started, before it said it was ready.
        public var beforeReady: Bool
        /// The end of what it wrote on its standard output, when that says why; empty if not.
        public var lastOutput: String

        /// A crash of `process`.
        public init(
            _ process: PluginProcess, _ death: Death, beforeReady: Bool = false, lastOutput: String = ""
        ) {
            self.process = process
            self.death = death
            self.beforeReady = beforeReady
            self.lastOutput = lastOutput
        }
    }

    /// Why what an attempt's work handed back cannot be taken.
    public enum Refusal: Sendable, Hashable, Codable {
        /// A shell job wrote more to `JOBRUNNER_OUTPUT` than `limit` bytes: at least `written`.
        case outputsTooLarge(written: Int, limit: Int)
        /// A line of a shell job's `JOBRUNNER_OUTPUT` is not `key=value`.
        case malformedOutput(line: Int, text: String)
        /// A plugin's response is not valid JSON; its start.
        case responseNotJSON(String)
        /// A plugin's response is longer than the `limit` bytes a response may have; `claimed`
        /// is its length when the plugin said it.
        case responseTooLarge(claimed: Int?, limit: Int)
        /// A plugin's worker announced a frame of `length` bytes, more than the `limit` a frame
        /// may have.
        case oversizedFrame(length: Int, limit: Int, beforeReady: Bool)
        /// A plugin's response carries outputs of `written` bytes (each `key=value` and a line
        /// break, as a shell job writes them), more than the `limit` a job's outputs may have.
        case pluginOutputsTooLarge(written: Int, limit: Int)
        /// A shell job wrote more to `JOBRUNNER_CONTROL` than `limit` bytes: at least `written`.
        case controlTooLarge(written: Int, limit: Int)
    }

    /// Why an attempt's work could not be started.
    public enum StartFailure: Sendable, Hashable, Codable {
        /// The job's command (exit code 127, SPEC 5.2).
        case command(String)
        /// The process to run a plugin's handler in.
        case pluginProcess(PluginProcess, String)
        /// The plugin's worker started but cannot load the plugin.
        case pluginNotLoaded(String)
        /// The job's plugin cannot be used; the words of the problem.
        case plugin(String)
        /// The attempt's directory could not be made.
        case workDirectory(path: String, error: String)
        /// The outputs of the jobs it needs could not be handed over.
        case neededOutputs(String)
        /// The attempt reached a handler that does not run such jobs (`shell` or `plugin`).
        case notForHandler(String)
    }

    /// What the runner makes of it: succeeded, failed, timeout, tempfail, skipped, interrupted.
    public var outcome: AttemptOutcome {
        switch self {
        case .succeeded: .succeeded
        case .skipped: .skipped
        case .exited(let code): code == RetryPolicy.tempFailExitCode ? .tempfail : .failed
        case .pluginRetry: .tempfail
        case .timedOut: .timeout
        case .interrupted: .interrupted
        case .signalled, .crashed, .pluginFailed, .refused, .cannotStart: .failed
        }
    }

    /// The exit status it says a process ended with: an exit's, a plugin's process's, 127 for a
    /// command that cannot be started (SPEC 5.2).
    public var exitCode: Int32? {
        switch self {
        case .exited(let code): code
        case .crashed(let crash): if case .exited(let code) = crash.death { code } else { nil }
        case .cannotStart(.command): 127
        default: nil
        }
    }

    /// The signal it says ended a process.
    public var signal: Int32? {
        switch self {
        case .signalled(let signal): signal
        case .crashed(let crash): if case .signalled(let signal) = crash.death { signal } else { nil }
        default: nil
        }
    }

    /// The same end with `transform` applied to every text it carries from elsewhere (a skip
    /// reason, a plugin's message, an error's words), as masking secrets needs.
    public func mappingTexts(_ transform: (String) -> String) -> AttemptEnd {
        switch self {
        case .succeeded, .exited, .signalled, .timedOut, .interrupted:
            return self
        case .skipped(let text):
            return .skipped(transform(text))
        case .pluginFailed(let text):
            return .pluginFailed(transform(text))
        case .pluginRetry(let text):
            return .pluginRetry(transform(text))
        case .crashed(var crash):
            crash.lastOutput = transform(crash.lastOutput)
            return .crashed(crash)
        case .refused(let refusal):
            return .refused(refusal.mappingTexts(transform))
        case .cannotStart(let failure):
            return .cannotStart(failure.mappingTexts(transform))
        }
    }
}

extension AttemptEnd.Refusal {
    fileprivate func mappingTexts(_ transform: (String) -> String) -> Self {
        switch self {
        case .outputsTooLarge, .responseTooLarge, .oversizedFrame, .pluginOutputsTooLarge, .controlTooLarge:
            self
        case .malformedOutput(let line, let text): .malformedOutput(line: line, text: transform(text))
        case .responseNotJSON(let text): .responseNotJSON(transform(text))
        }
    }
}

extension AttemptEnd.StartFailure {
    fileprivate func mappingTexts(_ transform: (String) -> String) -> Self {
        switch self {
        case .command(let why): .command(transform(why))
        case .pluginProcess(let process, let why): .pluginProcess(process, transform(why))
        case .pluginNotLoaded(let why): .pluginNotLoaded(transform(why))
        case .plugin(let why): .plugin(transform(why))
        case .workDirectory(let path, let error):
            .workDirectory(path: transform(path), error: transform(error))
        case .neededOutputs(let why): .neededOutputs(transform(why))
        case .notForHandler: self
        }
    }
}
