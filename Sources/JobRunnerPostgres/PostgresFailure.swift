import JobRunnerCore
import Logging
import PostgresNIO

/// The one place where the client's errors become ``StoreError``s: a sentence for the user
/// that says what to do, the client's error kept as the cause.
enum PostgresFailure {
    /// An error met while connecting to `url` for the first time.
    static func connecting(_ error: any Error, to url: StoreURL) -> StoreError {
        let place = url.host.map { "\($0):\(url.port)" } ?? url.socketDirectory ?? "?"
        if let psql = error as? PSQLError {
            if let state = psql.serverInfo?[.sqlState] {
                let said = psql.serverInfo?[.message] ?? "\(psql.code)"
                switch state {
                case "28P01", "28000":
                    return StoreError(
                        .unusable,
                        "PostgreSQL at \(place) refused user \(url.user) (\(said)); check the user and password in --store",
                        cause: error)
                case "3D000":
                    return StoreError(
                        .unusable,
                        "PostgreSQL at \(place) has no database \(url.database); create it (createdb \(url.database)) and run `jobrunner migrate --store URL`",
                        cause: error)
                default:
                    return StoreError(
                        .unusable, "cannot connect to the store \(url): \(said) (SQLSTATE \(state))",
                        cause: error)
                }
            }
            if psql.code == .authMechanismRequiresPassword {
                return StoreError(
                    .unusable,
                    "PostgreSQL at \(place) asks user \(url.user) for a password and --store gives none; add it to the URL (postgres://USER:PASSWORD@…)",
                    cause: error)
            }
            let underneath = psql.underlying.map { "\($0)" } ?? "\(psql.code)"
            return StoreError(
                .unusable,
                "cannot reach PostgreSQL at \(place) (\(underneath)); check --store and that the server runs",
                cause: error)
        }
        return StoreError(
            .unusable,
            "cannot reach PostgreSQL at \(place) (\(error)); check --store and that the server runs",
            cause: error)
    }

    /// An error met by a read or a write once connected.
    static func query(_ error: any Error, doing what: String, on url: StoreURL) -> StoreError {
        if let error = error as? StoreError { return error }
        let detail: String
        if let psql = error as? PSQLError {
            if let message = psql.serverInfo?[.message] {
                detail = message + (psql.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
            } else {
                detail = psql.underlying.map { "\($0)" } ?? "\(psql.code)"
            }
        } else if let transaction = error as? PostgresTransactionError {
            return query(
                transaction.closureError ?? transaction.commitError ?? transaction.beginError ?? error,
                doing: what,
                on: url)
        } else {
            detail = "\(error)"
        }
        return StoreError(.io, "the store \(url) failed while \(what): \(detail)", cause: error)
    }
}

extension Logger {
    /// The logger the store's connections are given by default. It says only errors: the
    /// client's notices (a connection leased while the pool's task is still being scheduled,
    /// which then waits for it) are not the user's concern, and every failure reaches the user
    /// as a ``StoreError`` sentence anyway.
    public static var postgres: Logger {
        var logger = Logger(label: "jobrunner.postgres")
        logger.logLevel = .error
        return logger
    }
}
