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
        return try Self.settings(http: http, tokenFile: httpTokenFile, readOnly: httpReadOnly)
    }

    /// The settings of `--http`, `--http-token-file` and `--http-read-only`.
    static func settings(http: String, tokenFile httpTokenFile: String?, readOnly httpReadOnly: Bool) throws
        -> DashboardSettings
    {
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
            if let problem = Self.cannotListen(host: host, port: port) {
                throw ValidationError("--http \(http): cannot listen on \(host):\(port): \(problem)")
            }
            return settings
        } catch let error as DashboardSettingsError {
            throw ValidationError(error.description)
        }
    }
}

/// `web`'s options: the same as ``HTTPOptions``, `--http` required (the dashboard is all `web`
/// does), so `--help` shows it so.
struct WebHTTPOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Serve the dashboard, JSON API, events and metrics here (a bare port binds 127.0.0.1; 0 picks a free port).",
            valueName: "[addr:]port"))
    var http: String

    @Option(
        help: ArgumentHelp(
            "Every request must carry the token in this file (else $JOBRUNNER_HTTP_TOKEN); needed for a non-loopback address.",
            valueName: "file"))
    var httpTokenFile: String?

    @Flag(help: "Show no action on the dashboard and refuse every one (403).")
    var httpReadOnly = false

    func settings() throws -> DashboardSettings {
        try HTTPOptions.settings(http: http, tokenFile: httpTokenFile, readOnly: httpReadOnly)
    }
}

extension HTTPOptions {
    /// Why the dashboard could not listen on `host:port`, in words that say what to do, found by
    /// binding a socket there and letting it go, before any job starts: a port in use or an
    /// address of another machine would otherwise be found only once the runner had started its
    /// jobs, and end the run. Nil when it can. Port 0 is tried too (the address may not be this
    /// machine's). The server binds again for real, with the same SO_REUSEADDR.
    static func cannotListen(host: String, port: Int) -> String? {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let looked = getaddrinfo(host, String(port), &hints, &found)
        guard looked == 0, let first = found else {
            return "the address cannot be resolved (\(String(cString: gai_strerror(looked)))); "
                + "give an address of this machine (127.0.0.1 for this machine only)"
        }
        defer { freeaddrinfo(found) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var yes: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            return listenProblem(errno: errno, port: port)
        }
        // Listening too: a socket bound with SO_REUSEADDR can share an address with one that
        // is not listening yet, but not with a listener.
        guard listen(fd, 1) == 0 else { return listenProblem(errno: errno, port: port) }
        return nil
    }

    /// A failed bind or listen in words that fit its cause.
    static func listenProblem(errno code: Int32, port: Int) -> String {
        switch code {
        case EADDRNOTAVAIL:
            return "the address is not one of this machine's; give one of its addresses "
                + "(127.0.0.1 for this machine only, 0.0.0.0 for every address)"
        case EADDRINUSE:
            return
                "port \(port) is in use; choose another port (0 picks a free one) or stop what listens there"
        case EACCES:
            return "ports below 1024 need privileges; choose a port from 1024 up (0 picks a free one)"
        default:
            return String(cString: strerror(code)) + "; choose another address or port (0 picks a free port)"
        }
    }
}

/// The dashboard of a store: its read model, its operator (none when read-only), and the line
/// that says where it listens.
enum DashboardSetup {
    static func dashboard(
        settings: DashboardSettings, reader: ReadModel, stateDirectory: StoreOpener,
        metrics: DashboardMetrics,
        logger: Logger, listened: @escaping @Sendable () -> Void = {}
    ) -> Dashboard {
        let actions = Operator(
            reader: reader, lock: stateDirectory.lock, waker: stateDirectory.waker, orphans: ProcessGroups(),
            // Over HTTP a message names no path of the server's.
            place: "this state directory")
        return Dashboard(
            reader: reader, operator: actions, settings: settings, metrics: metrics, pages: DashboardPages(),
            logger: logger,
            listening: { url in
                // Standard error: standard output may carry `--events -` JSON lines.
                writeText(STDERR_FILENO, "jobrunner: dashboard at \(url)\n")
                listened()
            })
    }
}
