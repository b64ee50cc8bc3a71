import Foundation
import JobRunnerCore
import JobRunnerPluginAPI

/// How a child process that ran one plugin call ended.
public enum ChildExit: Sendable, Equatable {
    /// It exited with this status, having written `output`.
    case exited(Int32, output: [UInt8])
    /// A signal ended it (a crash: SIGSEGV, SIGILL from a Swift trap, SIGABRT…).
    case signalled(Int32)
    /// It outlived the job's timeout and was ended.
    case timedOut
    /// It could not be started.
    case failedToStart(String)
    /// The runner is stopping; the child was ended.
    case interrupted
}

/// Runs a child process: `arguments` for the `jobrunner` executable, `input` on its standard
/// input, `identity` added to its environment (the variables that name its run, job and attempt,
/// by which a restarted runner finds it if this one dies); its standard output comes back (its last
/// `PluginLimits.responseBytes + 1` bytes at most: more is refused anyway), its
/// standard error goes to `log`. The child gets its
/// own process group, which a timeout or a stop ends (SIGTERM, then SIGKILL after `killGrace`);
/// `onSpawn` gets its pid.
public typealias ChildRunner =
    @Sendable (
        _ arguments: [String], _ input: [UInt8], _ identity: [String: String], _ log: String,
        _ timeout: Duration?, _ killGrace: Duration, _ onSpawn: @escaping @Sendable (Int32) -> Void
    ) async -> ChildExit

/// Runs plugin jobs in a child `jobrunner` process, one per attempt (`isolation: process`), so a
/// plugin that crashes fails only that attempt. The child speaks the plugin ABI's JSON on
/// standard input and output (`jobrunner plugin-call`).
public struct IsolatedPluginHandler: JobHandler {
    let catalog: PluginCatalog
    let runChild: ChildRunner

    /// A handler that loads plugins from `catalog` (to name the library to the child) and starts
    /// children with `runChild`.
    public init(catalog: PluginCatalog, runChild: @escaping ChildRunner) {
        self.catalog = catalog
        self.runChild = runChild
    }

    /// Runs one attempt in a child process and turns how the child ended into the attempt's result.
    public func run(_ request: AttemptRequest) async -> AttemptResult {
        let (plugin, handler): (PluginDescription, String)
        switch catalog.isolatedTarget(of: request) {
        case .success(let target): (plugin, handler) = target
        case .failure(let failure): return failure.result
        }
        let bytes = PluginRequest(attempt: request, handler: handler).jsonBytes
        let exit = await runChild(
            ["plugin-call", "--library", plugin.path, "--plugin", plugin.name, "--handler", handler], bytes,
            [
                "JOBRUNNER_RUN": request.runID, "JOBRUNNER_JOB": request.job.id,
                "JOBRUNNER_ATTEMPT": String(request.attempt),
            ],
            request.logPath,
            request.job.timeout, request.job.killGrace, request.onSpawn)
        switch exit {
        case .exited(0, let output) where output.count > PluginLimits.responseBytes:
            return AttemptResult(
                outcome: .failed,
                reason: "the plugin process wrote more than the "
                    + "\(PluginLimits.describe(bytes: PluginLimits.responseBytes)) a response may have")
        case .exited(0, let output):
            return AttemptResult(pluginResponse: output)
        case .exited(let status, let output):
            let text = String(decoding: output.suffix(300), as: UTF8.self).trimmingCharacters(
                in: .whitespacesAndNewlines)
            return AttemptResult(
                outcome: .failed, exitCode: status,
                reason: "plugin process exited \(status)" + (text.isEmpty ? "" : ": \(text)"))
        case .signalled(let signal):
            return AttemptResult(
                outcome: .failed, signal: signal,
                reason: "plugin process crashed: signal \(signal) (\(Self.signalName(signal)))")
        case .timedOut:
            return AttemptResult(
                outcome: .timeout,
                reason: "timeout after \(request.job.timeout.map(JobDuration.format) ?? "?")")
        case .failedToStart(let why):
            return AttemptResult(outcome: .failed, reason: "cannot start the plugin process: \(why)")
        case .interrupted:
            return AttemptResult(outcome: .interrupted, reason: "runner stopping")
        }
    }

    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGSEGV: return "SIGSEGV, a bad memory access"
        case SIGILL: return "SIGILL, a Swift runtime trap such as fatalError"
        case SIGTRAP: return "SIGTRAP, a Swift runtime trap such as fatalError"
        case SIGABRT: return "SIGABRT, abort()"
        case SIGBUS: return "SIGBUS"
        case SIGFPE: return "SIGFPE"
        case SIGKILL: return "SIGKILL"
        case SIGTERM: return "SIGTERM"
        default: return "signal \(signal)"
        }
    }
}
