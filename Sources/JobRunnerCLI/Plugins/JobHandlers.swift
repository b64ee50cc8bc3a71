import Foundation
import JobRunnerCore
import JobRunnerPluginHost
import JobRunnerShell
import NIOPosix

/// Sends each attempt to the handler its job asks for: the shell, a plugin in this process, or
/// a plugin in a child process.
struct JobHandlers: JobHandler {
    let shell: any JobHandler
    let inProcess: any JobHandler
    let isolated: any JobHandler

    func run(_ request: AttemptRequest) async -> AttemptResult {
        guard case .plugin = request.job.handler else { return await shell.run(request) }
        switch request.job.isolation {
        case .inprocess: return await inProcess.run(request)
        case .process: return await isolated.run(request)
        }
    }

    /// The handlers of a real run, on the system clock. In-process plugin calls block the threads
    /// of `pluginThreads`, which the caller starts and stops; the shell handler and isolated plugin
    /// calls share one limit on child processes, made here, once per runner.
    static func standard(
        plugins: PluginCatalog, pluginThreads: NIOThreadPool, clock: any RunnerClock = SystemClock(),
        secrets: Secrets = Secrets()
    ) -> JobHandlers {
        let executable = PluginVetting.executable
        let slots = ChildSlots(capacity: ChildSlots.defaultCapacity)
        return JobHandlers(
            shell: ShellHandler(slots: slots, clock: clock, secrets: secrets),
            inProcess: InProcessPluginHandler(catalog: plugins, threads: pluginThreads, clock: clock),
            isolated: IsolatedPluginHandler(catalog: plugins) {
                arguments, input, identity, log, timeout, killGrace, onSpawn in
                let child = ChildProcess(
                    program: .path(executable), arguments: arguments,
                    environment: ProcessInfo.processInfo.environment.merging(identity) { $1 }, input: input,
                    // One byte past the limit is enough to refuse a response that is too long.
                    output: .keep(lastBytes: PluginLimits.responseBytes + 1), errors: .appendToFile(log),
                    timeout: timeout, killGrace: killGrace, clock: clock)
                let outcome = await child.run(in: slots, onSpawn: onSpawn)
                switch outcome.termination {
                case .exited(let status): return .exited(status, output: outcome.output)
                case .signalled(let signal): return .signalled(signal)
                case .timedOut: return .timedOut
                case .failedToStart(let why): return .failedToStart(why)
                case .interrupted: return .interrupted
                }
            })
    }
}
