import ArgumentParser
import Foundation
import JobRunnerCore
import JobRunnerHTTP
import Logging
import ServiceLifecycle
import UnixSignals

/// `jobrunner web --http [ADDR:]PORT`: the dashboard of a state directory, with no runner
/// (SPEC 7): history, logs, and the operator actions as the commands do them.
struct WebCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Serve the dashboard, JSON API, events and metrics of a state directory, with no runner.",
        discussion: """
            Stops cleanly on SIGTERM or SIGINT. Exit status: 0 stopped; 1 no state directory there; \
            2 an address or token that cannot be used; 3 the state directory could not be used.
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var httpOptions: WebHTTPOptions

    func validate() throws {
        _ = try httpOptions.settings()
    }

    func run() async throws {
        let settings = try httpOptions.settings()
        let stateDirectory = global.stateDirectory
        // A mistyped --state would otherwise become a new, empty state directory.
        guard FileManager.default.fileExists(atPath: stateDirectory.path) else {
            printError(
                "jobrunner: no state directory at \(stateDirectory.path): nothing was created; give the --state of a run or serve (or set $JOBRUNNER_STATE)"
            )
            throw ExitCode(ExitStatus.failed)
        }
        let store: OpenedStore
        do {
            // Read-only opens nothing for writing: an archived state directory can be shown.
            store =
                settings.readOnly && stateDirectory.hasDatabase
                ? try await stateDirectory.openForReading()
                : try await stateDirectory.openForWriting(preparing: true)
        } catch {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
        defer { store.close() }
        var logger = Logger(label: "jobrunner")
        logger.logLevel = .warning
        let dashboard = DashboardSetup.dashboard(
            settings: settings, reader: store.reader, stateDirectory: stateDirectory,
            metrics: DashboardMetrics(timesCommits: false),
            logger: logger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: dashboard)], gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        do {
            try await group.run()
        } catch {
            printError("jobrunner: the dashboard stopped: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
    }
}
