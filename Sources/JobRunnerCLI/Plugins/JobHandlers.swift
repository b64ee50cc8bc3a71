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

    /// The handlers of a real run, on the system clock; in-process plugin calls block the threads
    /// of `pluginThreads`, which the caller starts and stops.
    static func standard(
        plugins: PluginCatalog, pluginThreads: NIOThreadPool, clock: any RunnerClock = SystemClock()
    ) -> JobHandlers {
        let executable = ((Bundle.main.executablePath ?? "/proc/self/exe") as NSString)
            .resolvingSymlinksInPath
        let child = ChildCall(clock: clock)
        return JobHandlers(
            shell: ShellHandler(clock: clock),
            inProcess: InProcessPluginHandler(catalog: plugins, threads: pluginThreads, clock: clock),
            isolated: IsolatedPluginHandler(catalog: plugins) { arguments, input, log, timeout, onSpawn in
                let outcome = await child.run(
                    executable: executable, arguments: arguments, input: input, errorLog: log,
                    timeout: timeout,
                    onSpawn: onSpawn)
                switch outcome {
                case .exited(let status, let output): return .exited(status, output: output)
                case .signalled(let signal): return .signalled(signal)
                case .timedOut: return .timedOut
                case .failedToStart(let why): return .failedToStart(why)
                case .interrupted: return .interrupted
                }
            })
    }
}
