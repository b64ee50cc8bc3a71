import ArgumentParser
import Foundation
import Glibc
import JobRunnerCore
import JobRunnerHTTP
import JobRunnerShell
import Logging

/// `--http [ADDR:]PORT`, `--http-token-file FILE` and `--http-read-only` (SPEC 7), for `run`,
/// `serve` and `web`.
struct HTTPOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Serve the dashboard, JSON API, events and metrics here (a bare port binds 127.0.0.1; 0 picks a free port).",
            valueName: "[addr:]port"))
    var http: String?

    @Option(
        help: ArgumentHelp(
            "Every request must carry the token in this file (else $JOBRUNNER_HTTP_TOKEN); needed for a non-loopback address.",
            valueName: "file"))
    var httpTokenFile: String?

    @Flag(help: "Show no action on the dashboard and refuse every one (403).")
    var httpReadOnly = false

    /// The settings the options make, nil without `--http`; throws a sentence (exit 2) for an
    /// address, a token file or a missing token that cannot be used.
    func settings() throws -> DashboardSettings? {
        guard let http else {
            if httpTokenFile != nil || httpReadOnly {
                throw ValidationError("--http-token-file and --http-read-only go with --http [ADDR:]PORT")
            }
            return nil
        }
        do {
            let (host, port) = try DashboardSettings.address(http)
            var token = ProcessInfo.processInfo.environment["JOBRUNNER_HTTP_TOKEN"]
            if let httpTokenFile {
                guard let text = try? String(contentsOfFile: httpTokenFile, encoding: .utf8) else {
                    throw ValidationError(
                        "--http-token-file \(httpTokenFile): cannot be read; give a file holding the token")
                }
                token = text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            if let value = token, value.isEmpty {
                throw ValidationError(
                    "the dashboard's token is empty (\(httpTokenFile ?? "$JOBRUNNER_HTTP_TOKEN")); put a long random text in it"
                )
            }
            let settings = DashboardSettings(host: host, port: port, token: token, readOnly: httpReadOnly)
            try settings.check()
            return settings
        } catch let error as DashboardSettingsError {
            throw ValidationError(error.description)
        }
    }
}

/// The dashboard of a store: its read model, its operator (none when read-only), and the line
/// that says where it listens.
enum DashboardSetup {
    static func dashboard(
        settings: DashboardSettings, reader: ReadModel, stateDirectory: StoreOpener,
        metrics: DashboardMetrics,
        logger: Logger
    ) -> Dashboard {
        let actions = Operator(
            reader: reader, lock: stateDirectory.lock, waker: stateDirectory.waker, orphans: ProcessGroups(),
            place: stateDirectory.path)
        return Dashboard(
            reader: reader, operator: actions, settings: settings, metrics: metrics, pages: DashboardPages(),
            logger: logger,
            listening: { url in
                // Standard error: standard output may carry `--events -` JSON lines.
                writeText(STDERR_FILENO, "jobrunner: dashboard at \(url)\n")
            })
    }
}
