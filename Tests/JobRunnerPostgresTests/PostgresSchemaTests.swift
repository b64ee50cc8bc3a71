import Foundation
import JobRunnerCore
import JobRunnerPostgres
import JobRunnerTesting
import Testing

/// Opening a PostgreSQL store and `migrate`: what each kind of bad input says, and that
/// nothing is written to a database that is refused.
@Suite(.enabled(if: ThrowawayPostgres.unavailable == nil, ThrowawayPostgres.skipComment))
struct PostgresSchemaTests {
    /// A migration this build does not have, as a newer jobrunner would bring.
    static let later = Migration(
        version: Migration.all.count + 1, summary: "a later table",
        statements: ["CREATE TABLE later (id int)"])

    /// A database of its own, with nothing in it.
    func emptyDatabase() async throws -> (ThrowawayPostgres, String, StoreURL) {
        let cluster = try await ThrowawayPostgres.shared()
        let url = try StoreURL(try await cluster.makeDatabase())
        return (cluster, url.database, url)
    }

    /// The tables of a database, as psql lists them.
    func tables(_ cluster: ThrowawayPostgres, _ database: String) async throws -> [String] {
        try await cluster.psql(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
            database: database
        ).split(separator: "\n").map(String.init)
    }

    @Test func migrateCreatesTheSchemaOnceAndSaysSo() async throws {
        let (cluster, database, url) = try await emptyDatabase()
        let first = try await PostgresQueueStore.migrate(url, appliedBy: "tests")
        #expect(first.from == 0 && first.to == Migration.all.count)
        let again = try await PostgresQueueStore.migrate(url, appliedBy: "tests")
        #expect(again.from == again.to, "a second migrate changes nothing")
        #expect(try await tables(cluster, database).contains("jobrunner_migrations"))
        let store = try await PostgresQueueStore.open(url)
        #expect(try await store.runs().isEmpty)
        await store.close()
    }

    @Test func aDatabaseWithoutTheSchemaSaysToRunMigrate() async throws {
        let (cluster, database, url) = try await emptyDatabase()
        let error = await #expect(throws: StoreError.self) { _ = try await PostgresQueueStore.open(url) }
        #expect(error?.message.contains("run `jobrunner migrate --store URL`") == true)
        #expect(try await tables(cluster, database).isEmpty, "opening wrote nothing")
    }

    @Test func anOlderSchemaSaysToRunMigrateAndMigrateUpgradesIt() async throws {
        let (_, _, url) = try await emptyDatabase()
        _ = try await PostgresQueueStore.migrate(url, appliedBy: "tests")
        let newer = Migration.all + [Self.later]
        let error = await #expect(throws: StoreError.self) {
            _ = try await PostgresQueueStore.open(url, migrations: newer)
        }
        #expect(
            error?.message.contains(
                "has schema \(Migration.all.count) and this jobrunner needs \(Self.later.version)") == true)
        #expect(error?.message.contains("run `jobrunner migrate --store URL`") == true)
        let upgrade = try await PostgresQueueStore.migrate(url, migrations: newer, appliedBy: "tests")
        #expect(upgrade.from == Migration.all.count && upgrade.to == Self.later.version)
        await (try await PostgresQueueStore.open(url, migrations: newer)).close()
    }

    @Test func aNewerSchemaIsRefusedAndNotTouched() async throws {
        let (cluster, database, url) = try await emptyDatabase()
        _ = try await PostgresQueueStore.migrate(
            url, migrations: Migration.all + [Self.later], appliedBy: "tests")
        let before = try await tables(cluster, database)
        let opening = await #expect(throws: StoreError.self) { _ = try await PostgresQueueStore.open(url) }
        #expect(opening?.code == .newerSchema)
        #expect(opening?.message.contains("written by a newer jobrunner") == true)
        let migrating = await #expect(throws: StoreError.self) {
            _ = try await PostgresQueueStore.migrate(url, appliedBy: "tests")
        }
        #expect(migrating?.code == .newerSchema)
        #expect(try await tables(cluster, database) == before)
        #expect(
            try await cluster.psql("SELECT max(version) FROM jobrunner_migrations", database: database)
                .trimmingCharacters(in: .whitespacesAndNewlines) == String(Self.later.version))
    }

    @Test func anotherApplicationsDatabaseIsRefusedAndNotTouched() async throws {
        let (cluster, database, url) = try await emptyDatabase()
        try await cluster.psql(
            "CREATE TABLE customers (id int); CREATE TABLE orders (id int)", database: database)
        for attempt in ["open", "migrate"] {
            let error = await #expect(throws: StoreError.self) {
                if attempt == "open" {
                    _ = try await PostgresQueueStore.open(url)
                } else {
                    _ = try await PostgresQueueStore.migrate(url, appliedBy: "tests")
                }
            }
            #expect(
                error?.message.contains("holds tables that are not jobrunner's (customers, orders)") == true,
                "\(attempt)")
        }
        #expect(try await tables(cluster, database) == ["customers", "orders"], "nothing was created beside them")
    }

    @Test func wrongCredentialsAreRefusedInOneSentence() async throws {
        let cluster = try await ThrowawayPostgres.shared()
        _ = try await cluster.makeDatabase()
        let url = try StoreURL(
            cluster.url(
                database: ThrowawayPostgres.template, user: ThrowawayPostgres.passwordRole, password: "wrong")
        )
        let error = await #expect(throws: StoreError.self) { _ = try await PostgresQueueStore.open(url) }
        #expect(error?.message.contains("refused user \(ThrowawayPostgres.passwordRole)") == true)
        #expect(error?.message.contains("wrong") == false, "the password is not repeated")
        #expect(error?.message.contains("\n") == false)
    }

    @Test func anUnreachableServerIsOneSentence() async throws {
        let nowhere =
            FileManager.default.temporaryDirectory.path + "/jobrunner-no-server-\(UUID().uuidString)"
        for text in [
            "postgres://postgres@/jobrunner?host=\(nowhere)", "postgres://postgres@127.0.0.1:1/jobrunner",
        ] {
            let error = await #expect(throws: StoreError.self) {
                _ = try await PostgresQueueStore.open(try StoreURL(text))
            }
            #expect(error?.message.hasPrefix("cannot reach PostgreSQL at ") == true, "\(text)")
            #expect(error?.message.contains("\n") == false)
        }
    }

    @Test func aMissingDatabaseSaysToCreateIt() async throws {
        let cluster = try await ThrowawayPostgres.shared()
        let url = try StoreURL(cluster.url(database: "no_such_database"))
        let error = await #expect(throws: StoreError.self) { _ = try await PostgresQueueStore.open(url) }
        #expect(error?.message.contains("has no database no_such_database") == true)
    }

    @Test(arguments: [
        "mysql://u@h/db", "postgres://h/db", "postgres://u@h/", "postgres://u@h:99999/db",
        "postgres://u@h/db?colour=blue", "postgres://u@h/db?sslmode=maybe",
    ])
    func aURLJobrunnerCannotTakeSaysHowToWriteOne(_ text: String) {
        let error = #expect(throws: StoreError.self) { _ = try StoreURL(text) }
        #expect(
            error?.message.contains("write it as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE") == true)
    }

    @Test func aURLsPasswordIsNeverShown() throws {
        let url = try StoreURL("postgres://jobs:s3cret@db.internal:6543/queue?sslmode=require")
        #expect(url.description == "postgres://jobs@db.internal:6543/queue")
        let error = #expect(throws: StoreError.self) {
            _ = try StoreURL("postgres://jobs:s3cret@db.internal/")
        }
        #expect(error?.message.contains("s3cret") == false)
    }
}
