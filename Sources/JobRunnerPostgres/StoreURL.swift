import Foundation
import JobRunnerCore
import NIOSSL
import PostgresNIO

/// A `--store` URL: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, or a unix socket's
/// directory as libpq takes it, `postgres://USER@/DATABASE?host=/run/postgresql`;
/// `?sslmode=disable|prefer|require` (TCP only; default `prefer`).
public struct StoreURL: Sendable, CustomStringConvertible {
    public let user: String
    let password: String?
    /// The host name, or nil for a unix socket.
    public let host: String?
    public let port: Int
    /// The directory of the unix socket, when there is no host.
    public let socketDirectory: String?
    public let database: String
    let sslMode: String

    /// Whether `text` names a PostgreSQL store (as opposed to nothing at all).
    public static func isPostgres(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Reads a URL.
    /// - Throws: ``StoreError`` `.unusable`, a sentence saying what is wrong with it.
    public init(_ text: String) throws(StoreError) {
        func bad(_ what: String) -> StoreError {
            StoreError(
                .unusable,
                "the store URL \(Self.redacted(text)) \(what); write it as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
            )
        }
        guard Self.isPostgres(text), let parts = URLComponents(string: text) else {
            throw bad("is not a postgres:// URL")
        }
        let query = Dictionary(
            (parts.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        for name in query.keys where !["host", "sslmode", "port"].contains(name) {
            throw bad(
                "has the parameter \(name), which jobrunner does not know (it takes host, port and sslmode)")
        }
        guard let user = parts.percentEncodedUser.flatMap({ $0.removingPercentEncoding }), !user.isEmpty
        else {
            throw bad("names no user")
        }
        self.user = user
        password = parts.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        let database = String(parts.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else { throw bad("names no database") }
        self.database = database
        let socket = query["host"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        let host =
            parts.host.flatMap { $0.isEmpty ? nil : $0 }
            ?? query["host"].flatMap { $0.hasPrefix("/") ? nil : $0 }
        if host == nil && socket == nil {
            throw bad("names no host (for a unix socket, add ?host=/its/directory)")
        }
        self.host = host
        socketDirectory = host == nil ? socket : nil
        if let given = parts.port ?? query["port"].flatMap({ Int($0) }) {
            guard (1...65535).contains(given) else { throw bad("has the port \(given), which is not one") }
            port = given
        } else if let text = query["port"] {
            throw bad("has the port \(text), which is not a number")
        } else {
            port = 5432
        }
        sslMode = query["sslmode"] ?? "prefer"
        guard ["disable", "prefer", "require"].contains(sslMode) else {
            throw bad("has sslmode=\(sslMode) (jobrunner takes disable, prefer or require)")
        }
    }

    /// The URL without its password, for messages.
    public var description: String {
        let place = host.map { "\($0):\(port)" } ?? ""
        let socket = socketDirectory.map { "?host=\($0)" } ?? ""
        return "postgres://\(user)@\(place)/\(database)\(socket)"
    }

    /// The text of a URL with any password left out, for messages about a URL that did not parse.
    public static func redacted(_ text: String) -> String {
        guard var parts = URLComponents(string: text), parts.password != nil else { return text }
        parts.password = nil
        return parts.string ?? "(the URL)"
    }

    /// How postgres-nio connects to it.
    func connection() throws(StoreError) -> PostgresConnection.Configuration {
        if let socketDirectory {
            return PostgresConnection.Configuration(
                unixSocketPath: socketDirectory + "/.s.PGSQL.\(port)", username: user, password: password,
                database: database)
        }
        let tls: PostgresConnection.Configuration.TLS
        do {
            switch sslMode {
            case "disable": tls = .disable
            case "require": tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            default: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        } catch {
            throw StoreError(.unusable, "cannot set up TLS for \(self): \(error)", cause: error)
        }
        return PostgresConnection.Configuration(
            host: host ?? "localhost", port: port, username: user, password: password, database: database,
            tls: tls)
    }

    /// How postgres-nio's pool connects to it.
    func client() throws(StoreError) -> PostgresClient.Configuration {
        if let socketDirectory {
            return PostgresClient.Configuration(
                unixSocketPath: socketDirectory + "/.s.PGSQL.\(port)", username: user, password: password,
                database: database)
        }
        let tls: PostgresClient.Configuration.TLS
        switch sslMode {
        case "disable": tls = .disable
        case "require": tls = .require(.makeClientConfiguration())
        default: tls = .prefer(.makeClientConfiguration())
        }
        return PostgresClient.Configuration(
            host: host ?? "localhost", port: port, username: user, password: password, database: database,
            tls: tls)
    }
}
