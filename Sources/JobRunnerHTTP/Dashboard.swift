import Foundation
import Hummingbird
import JobRunnerCore
import Logging
import NIOCore
import ServiceLifecycle

/// The dashboard, JSON API, event stream and `/metrics` of SPEC 7, as a service of the
/// process's service group: `run --http`, `serve --http` and `web`. It reads only through the
/// ``ReadModel`` and acts only through the ``Operator``.
public struct Dashboard: Service {
    let responder: DashboardResponder
    let settings: DashboardSettings
    let logger: Logger
    let listening: @Sendable (String) -> Void
    /// Whether the server has said it listens: an error before then is one of binding.
    private let listened = Locked(false)

    /// - Parameters:
    ///   - operator: the actions; nil refuses every one, as `--http-read-only` does.
    ///   - pages: renders the HTML pages; nil: the pages are not available (404 with a sentence).
    ///   - listening: called with the URL once the server listens (the real port for port 0).
    public init(
        reader: ReadModel, operator: Operator?, settings: DashboardSettings, metrics: DashboardMetrics,
        pages: (any PageRendering)? = nil, logger: Logger,
        listening: @escaping @Sendable (String) -> Void
    ) {
        self.settings = settings
        self.logger = logger
        self.listening = listening
        responder = DashboardResponder(
            reader: reader, operator: settings.readOnly ? nil : `operator`, settings: settings,
            access: Access(token: settings.token), metrics: metrics,
            hub: EventHub(
                reader: reader, capacity: settings.eventBuffer,
                onEvent: { await metrics.record($0, reader: reader) }),
            pages: pages)
    }

    /// The application, for tests that drive it in process.
    public func application() -> some ApplicationProtocol {
        let settings = settings
        let listening = listening
        let listened = listened
        return Application(
            responder: responder,
            configuration: ApplicationConfiguration(
                address: .hostname(settings.host, port: settings.port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? settings.port
                listened.withLock { $0 = true }
                listening(Self.listeningWords(host: settings.host, port: port, hostname: Self.hostname()))
            },
            logger: logger)
    }

    /// Where the server listens, as the line `dashboard at …` says it: the URL to open. An
    /// address of every interface (`0.0.0.0`, `::`) is no address to open: the URL is this
    /// machine's loopback one, and the words say it listens on every address, by the host's name.
    static func listeningWords(host: String, port: Int, hostname: String?) -> String {
        switch host {
        case "0.0.0.0", "::":
            let loopback = host == "::" ? "[::1]" : "127.0.0.1"
            let elsewhere = hostname.map { " (http://\($0):\(port)/ from elsewhere)" } ?? ""
            return
                "http://\(loopback):\(port)/, listening on port \(port) of every address of this machine\(elsewhere)"
        default:
            return "http://\(host.contains(":") ? "[\(host)]" : host):\(port)/"
        }
    }

    /// This machine's name, nil when it has none.
    private static func hostname() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? nil : name
    }

    /// Serves until the service group shuts down; follows the committed events meanwhile.
    public func run() async throws {
        let hub = responder.hub
        let reader = responder.reader
        let metrics = responder.metrics
        let heartbeat = settings.heartbeat
        // The store's latest event before the server answers: clients without Last-Event-ID get
        // what comes next, and the metrics start from the store's state now.
        let latest = (try? await reader.latestEventSequence()) ?? 0
        hub.start(after: latest)
        await metrics.load(from: reader)
        let application = application()
        let (shutdown, beginShutdown) = AsyncStream<Void>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await hub.follow() }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: heartbeat)
                    hub.beat()
                }
            }
            // Its own service group follows this one's graceful shutdown, which waits for the
            // requests under way: the event streams, which never end by themselves, are ended.
            group.addTask { [listened, settings] in
                do {
                    try await application.run()
                } catch  where !listened.withLock({ $0 }) {
                    throw DashboardListenError(host: settings.host, port: settings.port, cause: error)
                }
            }
            group.addTask {
                for await _ in shutdown { break }
                guard !Task.isCancelled else { return }
                // The streams end once they have had the events committed so far (the run's
                // last ones), or after 2 s whatever happens; a connection still open 3 s later
                // (a client that stopped reading) is cut: the server is cancelled.
                if let latest = try? await reader.latestEventSequence() { hub.close(after: latest) }
                try? await Task.sleep(for: .seconds(2))
                hub.close()
                try? await Task.sleep(for: .seconds(3))
            }
            try await withGracefulShutdownHandler {
                // The first to end: the application, or the shutdown's deadline.
                _ = try await group.next()
            } onGracefulShutdown: {
                beginShutdown.yield()
            }
            group.cancelAll()
        }
    }
}

/// Renders the HTML pages (JobRunnerPages, through the command line): a whole document, or nil
/// for no such run, job or attempt.
public protocol PageRendering: Sendable {
    /// The page at `path` (`/`, `/runs`, `/runs/ID`, …) with its query, or nil when the path
    /// names nothing. The server puts what an action said in `message` (and `message-kind`:
    /// `error` for a refusal), never what the address said.
    func page(
        path: [String], query: [String: String], reader: ReadModel, csrfToken: String?, readOnly: Bool
    ) async throws -> String?
    /// A static asset compiled into the binary.
    func asset(named: String) -> (contentType: String, body: [UInt8])?
    /// The page of an address that names nothing (answered with 404).
    func notFound(path: [String], reader: ReadModel, readOnly: Bool) async -> String
}
