import Foundation
import JobRunnerCore
import JobRunnerPluginAPI

/// How a child process that ran one plugin call ended.
public enum ChildExit: Sendable, Equatable {
    /// It exited with this status, having written `output`.
    case exited(Int32, output: [UInt8])
    /// A signal ended it (a crash: SIGSEGV, SIGILL from a Swift trap, SIGABRT…).
    case signalled(Int32)
    /// The teardown policy ended it: it outlived the job's timeout, or the runner is stopping.
    case stopped(Teardown.Stop)
    /// It could not be started.
    case failedToStart(String)
}

/// Runs a child process: `arguments` for the `jobrunner` executable, `input` on its standard
/// input, `identity` added to its environment (the variables that name its run, job and attempt,
/// by which a restarted runner finds it if this one dies); its standard output comes back (its last
/// `PluginLimits.responseBytes + 1` bytes at most: more is refused anyway), its
/// standard error goes to `log`. The child gets its own process group, which a timeout or a stop
/// ends by `teardown` (SIGTERM, then SIGKILL after `killGrace`); `onSpawn` gets its pid.
public typealias ChildRunner =
    @Sendable (
        _ arguments: [String], _ input: [UInt8], _ identity: [String: String], _ log: String,
        _ teardown: Teardown, _ onSpawn: @escaping @Sendable (Int32) -> Void
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
        case .failure(let failure): return AttemptResult(failure.end)
        }
        let bytes = PluginRequest(attempt: request, handler: handler).jsonBytes
        let exit = await runChild(
            ["plugin-call", "--library", plugin.path, "--plugin", plugin.name, "--handler", handler], bytes,
            [
                "JOBRUNNER_RUN": request.runID, "JOBRUNNER_JOB": request.job.id,
                "JOBRUNNER_ATTEMPT": String(request.attempt),
            ],
            request.logPath, Teardown(job: request.job), request.onSpawn)
        // The child wrote the handler's output straight into the log: capped now (SPEC 5.2).
        LogCap.cap(request.logPath)
        switch exit {
        case .exited(0, let output) where output.count > PluginLimits.responseBytes:
            return AttemptResult(.refused(.responseTooLarge(claimed: nil, limit: PluginLimits.responseBytes)))
        case .exited(0, let output):
            return AttemptResult(pluginResponse: output)
        case .exited(let status, let output):
            let text = String(decoding: output.suffix(300), as: UTF8.self).trimmingCharacters(
                in: .whitespacesAndNewlines)
            return AttemptResult(.crashed(.init(.perAttempt, .exited(status), lastOutput: text)))
        case .signalled(let signal):
            return AttemptResult(.crashed(.init(.perAttempt, .signalled(signal))))
        case .stopped(let stop):
            return AttemptResult(stop.end)
        case .failedToStart(let why):
            return AttemptResult(.cannotStart(.pluginProcess(.perAttempt, why)))
        }
    }
}
