import Foundation
import Glibc
import JobRunnerCore
import JobRunnerPluginHost
import JobRunnerShell

/// Sends each attempt to the handler its job asks for: the shell, a plugin in this process, a
/// plugin on a persistent worker process, or a plugin in a child process of its own.
struct JobHandlers: JobHandler {
    let shell: any JobHandler
    let inProcess: any JobHandler
    let pooled: any JobHandler
    let isolated: any JobHandler
    /// The workers `pooled` calls run on; nil when it has none (tests).
    var workers: PluginWorkerPool? = nil

    func run(_ request: AttemptRequest) async -> AttemptResult {
        let result: AttemptResult
        if case .plugin = request.job.handler {
            switch request.job.isolation {
            case .inprocess: result = await inProcess.run(request)
            case .process: result = await pooled.run(request)
            case .processPerAttempt: result = await isolated.run(request)
            }
        } else {
            result = await shell.run(request)
        }
        Self.noteInterruption(result, in: request.logPath)
        return result
    }

    /// In-process plugin calls start without a task of their own; the rest run in one.
    func start(_ request: AttemptRequest, ended: @escaping @Sendable (AttemptResult) -> Void) -> AttemptStop?
    {
        guard case .plugin = request.job.handler, request.job.isolation == .inprocess else { return nil }
        let logPath = request.logPath
        return inProcess.start(request) { result in
            Self.noteInterruption(result, in: logPath)
            ended(result)
        }
    }

    /// An interrupted attempt's log ends with a line saying so, so that it does not just stop:
    /// `--- interrupted: the attempt was ended before it finished …`. Nothing for an attempt that
    /// never started.
    static func noteInterruption(_ result: AttemptResult, in logPath: String) {
        guard case .interrupted(let why) = result.end, why != .runnerStoppedBeforeStart else { return }
        var line = "--- interrupted: \(result.end.words)"
        if why == .runnerStopped {
            // The handler cannot tell a stop of the runner from an operator's `cancel` or `skip`
            // (or `overlap: replace`): both end the attempt the same way. Saying the job starts
            // again was false after a cancel.
            line =
                "--- interrupted: the attempt was ended before it finished (a stop of the runner, "
                + "or `cancel`, `skip` or `overlap: replace`); `jobrunner status` says what became of "
                + "its job (after a stop, the next `jobrunner run` or `serve` starts it again)"
        }
        let descriptor = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// Stops the plugin workers (`isolation: process`) once the run has ended.
    func shutDown() async {
        await workers?.shutDown()
    }

    /// The handlers of a real run, on the system clock. In-process plugin calls block the threads
    /// of `pluginThreads`, which the caller starts and stops; the shell handler and isolated plugin
    /// calls share one limit on child processes, made here, once per runner. The caller shuts
    /// `workers` down when the run ends. `executable` is the `jobrunner` that isolated calls run
    /// in (`plugin-worker`, `plugin-call`): this one, unless a test names the built binary.
    static func standard(
        plugins: PluginCatalog, pluginThreads: CallThreads, clock: any RunnerClock = SystemClock(),
        secrets: Secrets = Secrets(),
        environment: [String: String] = ProcessInfo.processInfo.environment,
        executable: String = PluginVetting.executable
    ) -> JobHandlers {
        let slots = ChildSlots(capacity: ChildSlots.defaultCapacity)
        let workers = PluginWorkerPool(
            capacity: PluginWorkerPool.capacity(
                environment: environment, activeProcessors: ProcessInfo.processInfo.activeProcessorCount),
            clock: clock
        ) { library, name in
            await ProcessPluginWorker.start(
                executable: executable, library: library, name: name, clock: clock)
        }
        return JobHandlers(
            shell: ShellHandler(slots: slots, clock: clock, secrets: secrets),
            inProcess: InProcessPluginHandler(catalog: plugins, threads: pluginThreads, clock: clock),
            pooled: PooledPluginHandler(catalog: plugins, pool: workers),
            isolated: IsolatedPluginHandler(catalog: plugins) {
                arguments, input, identity, log, teardown, onSpawn in
                let child = ChildProcess(
                    program: .path(executable), arguments: arguments,
                    environment: ProcessInfo.processInfo.environment.merging(identity) { $1 }, input: input,
                    // One byte past the limit is enough to refuse a response that is too long.
                    output: .keep(lastBytes: PluginLimits.responseBytes + 1), errors: .appendToFile(log),
                    teardown: teardown, clock: clock)
                let outcome = await child.run(in: slots, onSpawn: onSpawn)
                switch outcome.termination {
                case .exited(let status): return .exited(status, output: outcome.output)
                case .signalled(let signal): return .signalled(signal)
                case .stopped(let stop): return .stopped(stop)
                case .failedToStart(let why): return .failedToStart(why)
                }
            }, workers: workers)
    }
}
