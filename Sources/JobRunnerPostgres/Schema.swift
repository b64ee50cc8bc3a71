import JobRunnerCore
import Logging
import PostgresNIO

/// What a database holds, as the store finds it on opening, and `migrate`.
enum Schema {
    /// The state of a database's schema.
    enum Found: Equatable {
        /// No table at all: a new database.
        case empty
        /// Ours, at this version.
        case version(Int)
        /// Tables, none of them `jobrunner_migrations`: another application's database.
        case foreign([String])
    }

    /// Reads what the database holds.
    static func inspect(_ connection: PostgresConnection, logger: Logger) async throws -> Found {
        var tables: [String] = []
        for try await (name) in try await connection.query(
            PostgresQuery(unsafeSQL: SQL.tables), logger: logger
        )
        .decode(String.self) {
            tables.append(name)
        }
        if tables.isEmpty { return .empty }
        guard tables.contains(Migration.table) else { return .foreign(tables) }
        var version = 0
        for try await (number, _) in try await connection.query(
            PostgresQuery(unsafeSQL: SQL.appliedMigrations), logger: logger
        ).decode((Int, String).self) {
            version = max(version, number)
        }
        return .version(version)
    }

    /// Checks that a database is usable by this build as it is.
    /// - Throws: ``StoreError`` `.newerSchema` or `.unusable`, one sentence each.
    static func check(_ found: Found, url: StoreURL, migrations: [Migration]) throws(StoreError) {
        let latest = migrations.last?.version ?? 0
        switch found {
        case .empty:
            throw StoreError(
                .unusable,
                "the store \(url) has no jobrunner schema yet; run `jobrunner migrate --store URL` first")
        case .foreign(let tables):
            throw foreign(tables, url: url)
        case .version(let version) where version > latest:
            throw newer(version, latest: latest, url: url)
        case .version(let version) where version < latest:
            throw StoreError(
                .unusable,
                "the store \(url) has schema \(version) and this jobrunner needs \(latest); run `jobrunner migrate --store URL` to upgrade it"
            )
        case .version:
            return
        }
    }

    static func foreign(_ tables: [String], url: StoreURL) -> StoreError {
        let names = tables.prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", …" : "")
        return StoreError(
            .unusable,
            "the database of \(url) holds tables that are not jobrunner's (\(names)); give jobrunner a database of its own (createdb jobrunner)"
        )
    }

    static func newer(_ version: Int, latest: Int, url: StoreURL) -> StoreError {
        StoreError(
            .newerSchema,
            "the store \(url) has schema \(version), written by a newer jobrunner (this one knows up to \(latest)); use that version"
        )
    }

    /// Applies the migrations the database lacks, with the rows that record them, in one
    /// transaction (PostgreSQL's DDL is transactional: a failed upgrade leaves the schema as it
    /// was) under an advisory lock (two hosts migrating at once take turns).
    /// Returns the versions before and after.
    static func migrate(
        _ connection: PostgresConnection, url: StoreURL, migrations: [Migration], appliedBy: String,
        logger: Logger
    ) async throws -> (from: Int, to: Int) {
        let latest = migrations.last?.version ?? 0
        var before = 0
        try await connection.query("BEGIN", logger: logger)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: SQL.migrationLock), logger: logger)
            switch try await inspect(connection, logger: logger) {
            case .foreign(let tables): throw foreign(tables, url: url)
            case .version(let version) where version > latest: throw newer(version, latest: latest, url: url)
            case .version(let version): before = version
            case .empty:
                try await connection.query(PostgresQuery(unsafeSQL: SQL.createMigrations), logger: logger)
            }
            for migration in migrations where migration.version > before {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                var binds = PostgresBindings()
                binds.append(migration.version)
                binds.append(migration.summary)
                binds.append(appliedBy)
                try await connection.query(
                    PostgresQuery(unsafeSQL: SQL.recordMigration, binds: binds), logger: logger)
            }
            try await connection.query("COMMIT", logger: logger)
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
        return (before, max(before, latest))
    }
}
