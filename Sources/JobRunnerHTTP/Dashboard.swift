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
        return Application(
            responder: responder,
            configuration: ApplicationConfiguration(
                address: .hostname(settings.host, port: settings.port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? settings.port
                let host = settings.host.contains(":") ? "[\(settings.host)]" : settings.host
                listening("http://\(host):\(port)/")
            },
            logger: logger)
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
            group.addTask { try await application.run() }
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
    /// names nothing.
    func page(
        path: [String], query: [String: String], reader: ReadModel, csrfToken: String?, readOnly: Bool
    ) async throws -> String?
    /// A static asset compiled into the binary.
    func asset(named: String) -> (contentType: String, body: [UInt8])?
}
