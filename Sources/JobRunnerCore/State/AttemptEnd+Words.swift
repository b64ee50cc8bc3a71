import Foundation

extension AttemptEnd {
    /// The words of its reason, the one place they are made: the attempt's stored reason, its
    /// events, and the job's reason once the attempt decides how the job ends (``EndReason``).
    /// `exit:2`, `signal:9`, `timeout after 30s`, `the runner stopped`, a plugin's message, …
    public var words: String {
        switch self {
        case .succeeded: "succeeded"
        case .skipped(let text): text.isEmpty ? "skipped" : text
        case .exited(let code): "exit:\(code)"
        case .signalled(let signal): "signal:\(signal)"
        case .timedOut(let timeout): "timeout after \(JobDuration.format(timeout))"
        case .interrupted(let interruption): interruption.words
        case .crashed(let crash): crash.words
        case .pluginFailed(let message): message.isEmpty ? "failed" : message
        case .pluginRetry(let message): message.isEmpty ? "retry" : message
        case .refused(let refusal): refusal.words
        case .cannotStart(let failure): failure.words
        }
    }

    /// The reason an attempt's record keeps: its ``words``, none for a success.
    public var recordedReason: String? {
        self == .succeeded ? nil : words
    }

    /// "SIGSEGV, a bad memory access": what a signal that ended a process says about it.
    public static func describe(signal: Int32) -> String {
        switch signal {
        case SIGSEGV: "SIGSEGV, a bad memory access"
        case SIGILL: "SIGILL, a Swift runtime trap such as fatalError"
        case SIGTRAP: "SIGTRAP, a Swift runtime trap such as fatalError"
        case SIGABRT: "SIGABRT, abort()"
        case SIGBUS: "SIGBUS"
        case SIGFPE: "SIGFPE"
        case SIGKILL: "SIGKILL"
        case SIGTERM: "SIGTERM"
        default: "signal \(signal)"
        }
    }

    /// "16 MiB", "64 KiB": a limit in bytes as people read it.
    public static func describe(bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : "\(bytes >> 10) KiB"
    }
}

extension AttemptEnd.Interruption {
    /// `the runner stopped`, `cancelled by operator`, …
    var words: String {
        switch self {
        case .runnerStopped: "the runner stopped"
        case .runnerStoppedBeforeStart: "the runner stopped before it started"
        case .runnerGone: "its runner is gone"
        case .runnerDied: "the runner died while it ran"
        case .byOperator(let kind): EndReason.byOperator(kind).words
        }
    }
}

extension AttemptEnd.PluginProcess {
    /// `the plugin's worker`, `the plugin's process`.
    var words: String {
        switch self {
        case .worker: "the plugin's worker"
        case .perAttempt: "the plugin's process"
        }
    }
}

extension AttemptEnd.PluginCrash {
    /// `the plugin's worker died: signal 11 (SIGSEGV, a bad memory access)`, `the plugin's
    /// process exited 3: LAST OUTPUT`, `the plugin's worker exited 1 before it was ready`.
    var words: String {
        let when = beforeReady ? " before it was ready" : ""
        switch death {
        case .exited(let status):
            return "\(process.words) exited \(status)\(when)" + (lastOutput.isEmpty ? "" : ": \(lastOutput)")
        case .signalled(let signal):
            return "\(process.words) died\(when): signal \(signal) (\(AttemptEnd.describe(signal: signal)))"
        }
    }
}

extension AttemptEnd.Refusal {
    /// `outputs too large: …`, `JOBRUNNER_OUTPUT line 3 is not key=value: '…'`, …
    public var words: String {
        switch self {
        case .outputsTooLarge(let written, let limit):
            "outputs too large: at least \(written) bytes written to JOBRUNNER_OUTPUT, at most \(limit) allowed"
        case .malformedOutput(let line, let text):
            "JOBRUNNER_OUTPUT line \(line) is not key=value: '\(text.prefix(80))'"
        case .responseNotJSON(let start):
            "plugin response is not valid JSON: \(start)"
        case .responseTooLarge(let claimed?, let limit):
            "the plugin's response claims \(claimed) bytes, more than the "
                + "\(AttemptEnd.describe(bytes: limit)) a response may have"
        case .responseTooLarge(nil, let limit):
            "the plugin's response is longer than the \(AttemptEnd.describe(bytes: limit)) a response may have"
        case .oversizedFrame(let length, let limit, let beforeReady):
            "\(AttemptEnd.PluginProcess.worker.words) sent a response of \(length) bytes, more than \(limit)"
                + (beforeReady ? " before it was ready" : "")
        case .pluginOutputsTooLarge(let written, let limit):
            "outputs too large: the plugin's response carries \(written) bytes of outputs, at most \(limit) allowed"
        case .controlTooLarge(let written, let limit):
            "JOBRUNNER_CONTROL too large: at least \(written) bytes written, at most \(limit) allowed; "
                + "nothing in it was read (a skip= or retry-after= line takes one short line)"
        }
    }
}

extension AttemptEnd.StartFailure {
    /// `cannot start: …` (SPEC 5.2), `cannot start the plugin's worker: …`, …
    var words: String {
        switch self {
        case .command(let why): "cannot start: \(why)"
        case .pluginProcess(let process, let why): "cannot start \(process.words): \(why)"
        case .pluginNotLoaded(let why): "\(AttemptEnd.PluginProcess.worker.words) cannot load it: \(why)"
        case .plugin(let why): why
        case .workDirectory(let path, let error): "cannot create \(path): \(error)"
        case .neededOutputs(let why): "cannot pass needed outputs: \(why)"
        case .notForHandler(let kind): "not a \(kind) job"
        }
    }
}
