import Foundation

/// How the dashboard is served (SPEC 7): where it listens, the token every request needs, and
/// whether it acts at all.
public struct DashboardSettings: Sendable {
    /// The address to bind: `127.0.0.1` unless `--http` named one.
    public var host: String
    /// The port; 0 picks a free one (the one picked is said when the server listens).
    public var port: Int
    /// The token every request must carry (`Authorization: Bearer` or the login cookie); nil:
    /// none is asked for (loopback only).
    public var token: String?
    /// Refuses every action (403) and shows none.
    public var readOnly: Bool
    /// How many events wait for an SSE client before it is dropped (it resumes with
    /// `Last-Event-ID`). The waiting batches are shared by every client (framed once), so the
    /// memory they take is the slowest client's backlog once, not once per client: a fast run
    /// makes tens of thousands of events a second, and 4,096 dropped a client that was merely
    /// scheduled late.
    public var eventBuffer: Int = 65_536
    /// How often an idle SSE stream gets a comment line, so proxies and the browser keep it.
    public var heartbeat: Duration = .seconds(15)

    public init(host: String, port: Int, token: String?, readOnly: Bool) {
        self.host = host
        self.port = port
        self.token = token
        self.readOnly = readOnly
    }

    /// Parses `--http [ADDR:]PORT`: a bare port binds 127.0.0.1; `[::1]:8080` names an IPv6
    /// address. Throws a sentence that says what is wrong.
    public static func address(_ text: String) throws(DashboardSettingsError) -> (host: String, port: Int) {
        var host = "127.0.0.1"
        var portText = Substring(text)
        if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            if host.isEmpty {
                throw DashboardSettingsError(
                    "--http \(text): the address before the port is empty; write PORT or ADDR:PORT (127.0.0.1:8080)"
                )
            }
        }
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw DashboardSettingsError(
                "--http \(text): '\(portText)' is no port; write PORT or ADDR:PORT with a port from 0 to 65535 (0 picks a free one)"
            )
        }
        return (host, port)
    }

    /// Whether `host` is a loopback address (or `localhost`), reachable from this machine only.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Checks that a non-loopback address has a token (SPEC 7).
    public func check() throws(DashboardSettingsError) {
        if token == nil, !Self.isLoopback(host) {
            let exposed =
                readOnly
                ? "read its jobs' outputs and logs" : "act on its jobs and read their outputs and logs"
            throw DashboardSettingsError(
                "--http \(host):\(port) would let anyone who reaches this machine \(exposed); bind a loopback address (--http \(port)) or set a token with --http-token-file FILE or $JOBRUNNER_HTTP_TOKEN"
            )
        }
    }
}

/// A `--http` option that cannot be used, in a sentence.
public struct DashboardSettingsError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The server could not listen where `--http` says (found when it binds: a check before the
/// runner starts finds most causes sooner).
public struct DashboardListenError: Error, CustomStringConvertible, Sendable {
    public let host: String
    public let port: Int
    /// What binding threw.
    public let cause: any Error
    public var description: String { "cannot listen on \(host):\(port): \(cause)" }
}
