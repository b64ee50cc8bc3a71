import ArgumentParser
import Dispatch
import Foundation
import Glibc
import JobRunnerCore
import JobRunnerLMDB
import JobRunnerShell
import JobRunnerYAML
import Logging

/// `jobrunner run [PATH…]`: validate, then run until every job of the run is final.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the jobs, resuming an interrupted run of the same jobs.",
        discussion: """
            Exit status: 0 every job succeeded or was skipped; 1 a job failed, was blocked or cancelled; \
            2 invalid job files, nothing ran; 3 the state directory could not be used; 130/143 stopped by \
            SIGINT/SIGTERM after a clean stop.
            """
    )

    enum Progress: String, ExpressibleByArgument, CaseIterable {
        case auto, tty, plain, none
    }

    @OptionGroup var global: GlobalOptions

    @Argument(help: "Job files or directories (default: jobs/).")
    var paths: [String] = []

    @Flag(help: "Start a fresh run even if an interrupted run of the same jobs could be resumed.")
    var new = false

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

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, not \(jobs)") }
    }

    func run() async throws {
        let jobSet = JobSet.load(paths)
        guard let workload = jobSet.workload else { throw ExitCode(ExitStatus.invalid) }
        let stateDirectory = global.stateDirectory
        let lock: RunnerLock
        let store: LMDBQueueStore
        do {
            try stateDirectory.prepare()
            lock = try stateDirectory.lockForRunner()
            store = try stateDirectory.openStore()
        } catch {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
        defer {
            store.close()
            withExtendedLifetime(lock) {}
        }

        var observers: [any RunObserver] = []
        if let events { observers.append(try EventsWriter(path: events)) }
        let progressFD = events == "-" ? STDERR_FILENO : STDOUT_FILENO
        switch resolvedProgress(fd: progressFD) {
        case .tty: observers.append(TerminalProgress(fd: progressFD, totalJobs: workload.jobs.count))
        case .plain: observers.append(PlainProgress(fd: progressFD))
        case .none, .auto: break
        }

        let pluginThreads = PluginThreads(environment: ProcessInfo.processInfo.environment)
        defer { pluginThreads.stop() }
        let handlers = JobHandlers.standard(plugins: jobSet.plugins, pluginThreads: pluginThreads.pool)

        var logger = Logger(label: "jobrunner")
        logger.logLevel = .warning
        let runner = Runner(
            workload: workload, store: store, handler: handlers,
            observer: ObserverList(observers),
            orphans: ProcessGroups(), connectivity: Self.probe(for: workload),
            constraints: ShellConstraints(),
            options: RunnerOptions(
                maxRunning: jobs, startNewRun: new, logDirectory: stateDirectory.logsPath, runnerPID: getpid()
            ),
            logger: logger)
        let signals = SignalForwarder(signals: [SIGINT, SIGTERM, SIGUSR1]) { signal in
            // SIGUSR1 is how `suspend`, `resume`, `retry`, `skip` and `cancel` say "look at the store".
            if signal == SIGUSR1 { runner.poke() } else { runner.requestStop(signal: signal) }
        }
        defer { signals.cancel() }

        let started = Date()
        let summary: RunSummary
        do {
            summary = try await runner.run()
        } catch {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
        let message = Self.describe(summary, seconds: Date().timeIntervalSince(started))
        writeText(progressFD, message + "\n")
        if let signal = summary.stopSignal { throw ExitCode(128 + signal) }
        throw summary.state == .succeeded ? ExitCode.success : ExitCode(ExitStatus.failed)
    }

    /// `JOBRUNNER_ONLINE` forces the answer; else the job files' probe; else the built-in check.
    static func probe(for workload: Workload) -> any ConnectivityProbe {
        switch ProcessInfo.processInfo.environment["JOBRUNNER_ONLINE"] {
        case "1": return FixedProbe(online: true)
        case "0": return FixedProbe(online: false)
        default: break
        }
        let settings = workload.connectivity
        guard let command = settings.probe else { return SystemProbe() }
        return CommandProbe(
            command: command, workingDirectory: settings.workingDirectory,
            timeLimit: min(settings.interval, .seconds(30)))
    }

    private func resolvedProgress(fd: Int32) -> Progress {
        guard progress == .auto else { return progress }
        let dumb = ProcessInfo.processInfo.environment["TERM"].map { $0 == "dumb" || $0.isEmpty } ?? true
        return isatty(fd) == 1 && !dumb ? .tty : .plain
    }

    static func describe(_ summary: RunSummary, seconds: Double) -> String {
        let order: [JobState] = [
            .succeeded, .skipped, .failed, .blocked, .cancelled, .waiting, .pending, .running,
        ]
        let counts = order.compactMap { state in summary.counts[state].map { "\($0) \(state.rawValue)" } }
        let verb: String
        switch summary.state {
        case .succeeded: verb = "succeeded"
        case .failed: verb = "failed"
        case .stopped: verb = "stopped"
        case .running: verb = "is running"
        case .skipped: verb = "was skipped"
        case .missed: verb = "was missed"
        }
        let resumed = summary.resumed ? " (resumed)" : ""
        return "run \(summary.runID)\(resumed) \(verb) in \(Timestamps.elapsed(seconds)): "
            + (counts.isEmpty ? "no jobs" : counts.joined(separator: ", "))
    }
}

/// Turns SIGINT and SIGTERM into calls, instead of the default of dying on the spot.
final class SignalForwarder {
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "jobrunner.signals")
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
