import ArgumentParser
import Dispatch
import Foundation
import Glibc
import JobRunnerCore
import JobRunnerHTTP
import JobRunnerShell
import JobRunnerYAML
import Logging
import ServiceLifecycle
import UnixSignals

/// How progress is shown.
enum Progress: String, ExpressibleByArgument, CaseIterable {
    case auto, tty, plain, none
}

/// What `run` and `serve` both take.
struct SessionOptions: ParsableArguments {
    @Argument(help: "Job files or directories (default: jobs/).")
    var paths: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp("At most this many attempts at once, over all pipelines.", valueName: "n"))
    var jobs: Int?

    @Option(
        help: ArgumentHelp(
            "Write events as JSON lines to this file, or - for standard output.", valueName: "file"))
    var events: String?

    @Option(help: "auto, tty (a live board), plain (a line per transition) or none.")
    var progress: Progress = .auto

    @OptionGroup var envFiles: EnvFileOptions

    @OptionGroup var httpOptions: HTTPOptions

    @Option(
        help: ArgumentHelp(
            "With --store URL: how often this host renews its leases on the attempts it runs (default 5s).",
            valueName: "duration"))
    var heartbeat: String?

    @Option(
        help: ArgumentHelp(
            "With --store URL: how long a renewal holds; other hosts take this host's attempts back 10s after it ends (default 30s).",
            valueName: "duration"))
    var lease: String?

    /// How many attempts a host of a shared store runs at once without `--jobs`.
    static let sharedSlots = 16

    /// `--heartbeat` and `--lease`, checked by ``check()``.
    var leaseTiming: (heartbeat: Duration, lease: Duration) {
        (
            heartbeat.flatMap(JobDuration.parse) ?? .seconds(5),
            lease.flatMap(JobDuration.parse) ?? .seconds(30)
        )
    }

    func check() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, not \(jobs)") }
        for (name, value) in [("--heartbeat", heartbeat), ("--lease", lease)] {
            if let value, (JobDuration.parse(value) ?? .zero) <= .zero {
                throw ValidationError("\(name) takes a duration such as 5s or 1m, not '\(value)'")
            }
        }
        if leaseTiming.heartbeat * 2 > leaseTiming.lease {
            throw ValidationError(
                "--lease (\(JobDuration.format(leaseTiming.lease))) must be at least twice --heartbeat (\(JobDuration.format(leaseTiming.heartbeat))), so that one late heartbeat does not lose it"
            )
        }
        _ = try httpOptions.settings()
    }
}

/// One runner's life, for `run` and `serve`: the job files loaded, the state directory locked,
/// the handlers, observers and signals set up, the runner run, its summary printed.
struct RunnerSession {
    let global: GlobalOptions
    let options: SessionOptions

    /// Runs; returns the summary already printed. Throws an `ExitCode` for invalid job files (2)
    /// and an unusable state directory (3).
    /// - Parameter only: `run --only`: these jobs and what they need; empty: every job.
    func run(serve: Bool, startNew: Bool, only: [String] = []) async throws -> RunSummary {
        let environment = try options.envFiles.apply()
        let stateDirectory = global.stateDirectory
        // An existing database is opened, and a run to resume read, while the job files load.
        // Every way out before the store is taken waits for that reading to end and closes
        // what it opened: a process gone in the middle of a read leaves its slot in the
        // database's table of readers, which a live runner beside it would keep.
        let earlyStore = stateDirectory.openEarly()
        func letGoOfEarlyStore() async { await earlyStore.letGo() }
        let jobSet = await JobSet.load(options.paths, environment: environment)
        guard var workload = jobSet.workload else {
            await letGoOfEarlyStore()
            throw ExitCode(ExitStatus.invalid)
        }
        if !only.isEmpty {
            switch workload.only(only) {
            case .success(let subset): workload = subset
            case .failure(let unknown):
                printError("jobrunner: --only: \(unknown)")
                await letGoOfEarlyStore()
                throw ExitCode(ExitStatus.invalid)
            }
        }
        let secrets = Secrets(SecretMasker(values: workload.secretValues(environment: environment)))
        let pluginThreads = PluginThreads(environment: ProcessInfo.processInfo.environment)
        defer { pluginThreads.stop() }
        let jobHandlers = JobHandlers.standard(
            plugins: jobSet.plugins, pluginThreads: pluginThreads.pool, secrets: secrets)
        let handlers = MaskingHandler(
            jobHandlers,
            secrets: secrets,
            masksOwnLogs: { request in
                if case .plugin = request.job.handler { false } else { true }
            })
        // What a host that runs attempts of a shared store looks its jobs up in: this host's own
        // job files, as `serve` reloads them.
        let definitions = Locked(Self.definitions(of: workload))
        let lookUp: @Sendable (String) -> JobDefinition? = { id in definitions.withLock { $0[id] } }

        // Processes a job orphans (a `setsid` daemon) come back to the runner, which ends them
        // with their attempt and reaps them.
        ProcessGroups.becomeSubreaper()
        var opened: RunnerStore?
        while opened == nil {
            do {
                opened = try await stateDirectory.openForRunner(
                    early: earlyStore, timing: options.leaseTiming
                ) {
                    printError(
                        "jobrunner: waiting for a jobrunner command to finish with \(stateDirectory.path)")
                }
            } catch let error where error.code == .locked && stateDirectory.isShared {
                // Another host decides (SPEC 8): this one runs the attempts it queues.
                await letGoOfEarlyStore()
                switch try await workForAnotherHost(
                    stateDirectory, handler: handlers, jobs: lookUp, serve: serve)
                {
                case .finished(let summary):
                    await jobHandlers.shutDown()
                    return summary
                case .runnerGone: continue
                }
            } catch {
                printError("jobrunner: \(error)")
                await letGoOfEarlyStore()
                throw ExitCode(ExitStatus.stateUnusable)
            }
        }
        guard let state = opened else { throw ExitCode(ExitStatus.stateUnusable) }
        defer {
            state.close()
            withExtendedLifetime(state.hold) {}
        }

        var observers: [any RunObserver] = []
        let dashboardSettings = try options.httpOptions.settings()
        let metrics = dashboardSettings.map { _ in DashboardMetrics() }
        if let metrics {
            metrics.setPipelines(Self.pipelines(of: workload))
            observers.append(metrics.observer)
        }
        let eventsWriter = try options.events.map { try EventsWriter(path: $0) }
        if let eventsWriter { observers.append(eventsWriter) }
        let progressFD = options.events == "-" ? STDERR_FILENO : STDOUT_FILENO
        let logs = LogTail(directory: state.logs.logsPath)
        switch resolvedProgress(fd: progressFD) {
        case .tty:
            observers.append(TerminalProgress(fd: progressFD, totalJobs: workload.jobs.count, logs: logs))
        case .plain: observers.append(PlainProgress(fd: progressFD, logs: logs))
        case .none, .auto: break
        }

        // With a shared store the attempts are queued for every host, this one's worker
        // among them; `--jobs` caps this host's share, not the run.
        let worker = state.sharing.map { sharing in
            sharing.work(
                with: handlers, jobs: lookUp, logDirectory: state.logs.logsPath,
                slots: options.jobs ?? SessionOptions.sharedSlots)
        }
        let runnerHandler: any JobHandler =
            state.sharing.map { $0.queueing(logDirectory: state.logs.logsPath) } ?? handlers

        var logger = Logger(label: "jobrunner")
        logger.logLevel = .warning
        var runnerOptions = RunnerOptions(
            maxRunning: state.sharing == nil ? options.jobs : nil, startNewRun: startNew,
            logDirectory: state.logs.logsPath,
            runnerPID: getpid(),
            // Besides the wake-ups operator commands send, in case one is lost (a deleted
            // runner.lock left them no pid to signal): the store is read, and the runner's
            // lock checked, every second.
            storeCheckInterval: .seconds(1), serve: serve)
        runnerOptions.storedLogDirectory = LogLocation.folder
        runnerOptions.secrets = secrets
        let store: any QueueStore = metrics.map { TimedStore(state.store, metrics: $0) } ?? state.store
        let runner = Runner(
            workload: workload, store: store, claim: state.claim, handler: runnerHandler,
            observer: MaskingObserver(ObserverList(observers), secrets: secrets),
            orphans: ProcessGroups(), connectivity: RunCommand.probe(for: workload),
            constraints: MaskingConstraints(ShellConstraints(), secrets: secrets),
            options: runnerOptions,
            logger: logger, periodic: Timetable.Job.entries(of: workload), lock: state.hold,
            notifier: ShellNotifier(
                reader: ReadModel(store: state.store, lock: nil, logs: state.logs),
                logDirectory: state.logs.logsPath, secrets: secrets, environment: environment,
                plugins: handlers))
        let reloader =
            serve
            ? Reloader(
                paths: options.paths, files: jobSet.result.files, runner: runner, environment: environment,
                secrets: secrets,
                reloaded: { workload in
                    metrics?.setPipelines(Self.pipelines(of: workload))
                    definitions.withLock { $0 = Self.definitions(of: workload) }
                })
            : nil
        // The runner starts once the dashboard listens: an address it cannot listen on ends the
        // session before any job starts, and the line that says where it listens comes first.
        let (listening, listened) = AsyncStream<Void>.makeStream()
        let dashboard = dashboardSettings.map { settings in
            DashboardSetup.dashboard(
                settings: settings,
                reader: ReadModel(store: state.store, lock: stateDirectory.lock, logs: state.logs),
                stateDirectory: stateDirectory, metrics: metrics ?? DashboardMetrics(), logger: logger,
                listened: { listened.finish() })
        }
        // `serve` leaves SIGTERM and SIGINT to its service group (a graceful shutdown); `run` turns
        // them into a stop itself, to exit 128 + the signal.
        let stopSignals = serve ? [] : [SIGINT, SIGTERM]
        let signals = SignalForwarder(signals: stopSignals + [SIGHUP]) { signal in
            switch signal {
            case SIGHUP: reloader?.reload()
            default: runner.requestStop(signal: signal)
            }
        }
        defer { signals.cancel() }
        // How `suspend`, `resume`, `retry`, `skip` and `cancel` say "look at the store".
        let wakes = state.waker.listen { runner.poke() }
        defer { wakes.stop() }
        let watcher = reloader.map { reloader in
            // Unstructured: polls the job files' dates once a second until the session ends.
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    reloader.reloadIfChanged()
                }
            }
        }
        defer { watcher?.cancel() }

        let started = Date()
        let summary: RunSummary
        do {
            summary =
                serve || dashboard != nil
                ? try await Self.serve(
                    runner, dashboard: dashboard, listening: dashboard == nil ? nil : listening,
                    signals: serve,
                    logger: logger)
                : try await runner.run()
        } catch let error as DashboardListenError {
            printError(
                "jobrunner: --http \(error); nothing was started: choose another address or port (0 picks a free one)"
            )
            throw ExitCode(ExitStatus.invalid)
        } catch {
            await worker?.stop()
            // The runner ended its attempts before it threw; nothing already stored was changed.
            // A refused claim says itself what to do: another owner holds the store.
            let remedy =
                (error as? StoreError)?.code == .staleClaim
                ? ""
                : "; the running attempts were ended and what was stored is kept: "
                    + "fix the cause (free space, if the disk is full) and run again to resume"
            printError(secrets.masker.mask("jobrunner: \(error)" + remedy))
            throw ExitCode(ExitStatus.stateUnusable)
        }
        await worker?.stop()
        await jobHandlers.shutDown()
        let message = RunCommand.describe(summary, seconds: Date().timeIntervalSince(started))
        writeText(
            progressFD,
            secrets.masker.mask(message + "\n" + RunCommand.troubles(summary, state: global.state)))
        // Events that did not reach their file (a full disk) are not passed over in silence: a
        // reader of that file would take the run for what the lines it has say.
        if let problem = eventsWriter?.problem {
            printError("jobrunner: " + problem)
            // A stop by a signal keeps its own status (130, 143), which says more.
            if summary.stopSignal == nil { throw ExitCode(ExitStatus.stateUnusable) }
        }
        return summary
    }

    /// Runs the runner as a service of a service group, with the dashboard beside it when
    /// `--http` asks for one (it ends with the runner). `serve`'s group turns SIGTERM and SIGINT
    /// into a graceful shutdown: the runner stops cleanly; `run` stops its runner itself.
    private static func serve(
        _ runner: Runner, dashboard: Dashboard?, listening: AsyncStream<Void>?, signals: Bool, logger: Logger
    ) async throws -> RunSummary {
        let service = RunnerService(runner: runner, listening: listening)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)
        ]
        if let dashboard { services.append(.init(service: dashboard)) }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services, gracefulShutdownSignals: signals ? [.sigterm, .sigint] : [],
                logger: logger))
        try await group.run()
        guard let summary = service.summary else { throw CancellationError() }
        return summary
    }

    /// Runs the attempts another host's runner queues on a shared store, until the run it
    /// decides ends (`run`), a signal stops this host, or that runner is gone.
    private func workForAnotherHost(
        _ stateDirectory: StoreOpener, handler: any JobHandler,
        jobs: @escaping @Sendable (String) -> JobDefinition?, serve: Bool
    ) async throws -> HostWorkerSession.Ending {
        let joined: (sharing: any AttemptSharing, store: OpenedStore)
        do {
            joined = try await stateDirectory.openForWorker(timing: options.leaseTiming)
        } catch {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
        defer { joined.store.close() }
        let session = HostWorkerSession(
            sharing: joined.sharing, reader: joined.store.reader, handler: handler, jobs: jobs,
            logDirectory: stateDirectory.logs.logsPath, slots: options.jobs ?? SessionOptions.sharedSlots,
            serve: serve, progressFD: options.events == "-" ? STDERR_FILENO : STDOUT_FILENO)
        do {
            return try await session.work(place: stateDirectory.path)
        } catch {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
    }

    /// The jobs by id.
    private static func definitions(of workload: Workload) -> [String: JobDefinition] {
        Dictionary(workload.jobs.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Each job's pipeline, for the metrics' labels.
    private static func pipelines(of workload: Workload) -> [String: String] {
        Dictionary(workload.jobs.map { ($0.id, $0.pipeline) }, uniquingKeysWith: { first, _ in first })
    }

    private func resolvedProgress(fd: Int32) -> Progress {
        guard options.progress == .auto else { return options.progress }
        let dumb = ProcessInfo.processInfo.environment["TERM"].map { $0 == "dumb" || $0.isEmpty } ?? true
        return isatty(fd) == 1 && !dumb ? .tty : .plain
    }
}

/// Reloads `serve`'s job files when they change or on SIGHUP (SPEC 5.8): a load with errors is
/// printed and the last good definitions stay.
final class Reloader: Sendable {
    private let paths: [String]
    private let runner: Runner
    /// The environment `${NAME}` is expanded from: the runner's, with `--env-file`, as at start.
    private let environment: [String: String]
    private let secrets: Secrets
    /// Told each good reload's definitions.
    private let reloaded: @Sendable (Workload) -> Void
    private let state: Locked<(files: [String], stamps: [String: Stamp])>

    private struct Stamp: Equatable {
        var modified: Date?
        var size: Int?
    }

    init(
        paths: [String], files: [String], runner: Runner, environment: [String: String], secrets: Secrets,
        reloaded: @escaping @Sendable (Workload) -> Void = { _ in }
    ) {
        self.reloaded = reloaded
        self.paths = paths
        self.runner = runner
        self.environment = environment
        self.secrets = secrets
        state = Locked((files, Self.stamps(of: files)))
    }

    /// Reloads if a job file was added, removed or changed since the last look.
    func reloadIfChanged() {
        let (before, files) = state.withLock { ($0.stamps, $0.files) }
        let found = JobFileLoader.jobFiles(in: JobSet.jobPaths(paths)).files
        if Set(found) == Set(files) && Self.stamps(of: found) == before { return }
        reload()
    }

    /// Loads the job files again and hands good definitions to the runner.
    func reload() {
        // The files as they are before loading: an edit made while they load is a change at the
        // next look, not one marked seen and never loaded.
        let found = JobFileLoader.jobFiles(in: JobSet.jobPaths(paths)).files
        let stamps = Self.stamps(of: found)
        let jobSet = JobSet.loadInTurn(paths, environment: environment, consequence: "nothing was reloaded")
        let files = jobSet.result.files
        state.withLock { $0 = (found, stamps) }
        guard let workload = jobSet.workload else {
            printError("jobrunner: the job files have errors; the last good definitions keep running")
            return
        }
        // Standard error: standard output may carry `--events -` JSON lines.
        let jobs = workload.jobs.count
        writeText(
            STDERR_FILENO,
            "reloaded \(jobs) job\(jobs == 1 ? "" : "s") from \(files.count) file\(files.count == 1 ? "" : "s")\n"
        )
        secrets.update(SecretMasker(values: workload.secretValues(environment: environment)))
        runner.reload(workload)
        reloaded(workload)
    }

    private static func stamps(of files: [String]) -> [String: Stamp] {
        var stamps: [String: Stamp] = [:]
        for file in files {
            let attributes = try? FileManager.default.attributesOfItem(atPath: file)
            stamps[file] = Stamp(
                modified: attributes?[.modificationDate] as? Date,
                size: (attributes?[.size] as? NSNumber)?.intValue)
        }
        return stamps
    }
}

/// `serve`'s runner as a service: a graceful shutdown asks it to stop cleanly.
final class RunnerService: Service, Sendable {
    private let runner: Runner
    private let result = Locked<RunSummary?>(nil)
    /// Ends once the dashboard listens; the runner waits for it.
    private let listening: AsyncStream<Void>?

    init(runner: Runner, listening: AsyncStream<Void>? = nil) {
        self.runner = runner
        self.listening = listening
    }

    /// How the run ended, once it has.
    var summary: RunSummary? { result.withLock { $0 } }

    func run() async throws {
        let runner = self.runner
        if let listening {
            for await _ in listening {}
            // Cancelled: the dashboard could not listen, and the group ends without a run.
            try Task.checkCancellation()
        }
        let summary = try await withGracefulShutdownHandler {
            try await runner.run()
        } onGracefulShutdown: {
            runner.requestStop(signal: SIGTERM)
        }
        result.withLock { $0 = summary }
    }
}
