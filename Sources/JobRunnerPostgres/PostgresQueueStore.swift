import Foundation
import JobRunnerCore
import Logging
import PostgresNIO
import Synchronization

/// The PostgreSQL-backed ``QueueStore`` (SPEC 8): the same records as the LMDB store, in
/// tables of a database that several hosts can reach.
///
/// **Claims are fenced by the database.** The `claim` table holds one row: the owner whose
/// commits are taken and its fencing number. ``claim(owner:)`` raises the number; every owned
/// commit reads the row `FOR SHARE` in its own transaction and writes nothing when the number
/// is not its claim's, so a stale owner (another process, another host) is refused by the
/// database itself, not by memory.
///
/// **Group commit.** Submissions queue while a transaction is in flight; the writer then takes
/// them all and commits them in one transaction (``BatchRows``: a few statements whatever the
/// batch's size), in submission order, and calls each completion after the commit.
///
/// **Events** are numbered by the `event_sequence` row, locked by the transaction that takes
/// numbers until it commits: numbers are consecutive and in commit order across processes and
/// hosts. Each commit that makes events notifies `jobrunner_events`; followers in other
/// processes hear it on a listening connection of their own and look again at least every
/// ``eventPollInterval`` in case the notification was lost.
public final class PostgresQueueStore: QueueStore, Sendable {
    /// Where the store is.
    public let url: StoreURL
    let client: PostgresClient
    let logger: Logger
    /// The task running the client's pool (`PostgresClient.run()`); cancelled by ``close()``.
    private let pool: Task<Void, Never>
    let writer: Writer
    let followers = Followers()
    /// The listening connection for the events, started when the first follower waits.
    let eventListener = Mutex<NotificationListener?>(nil)

    /// How long a follower waits for a notification before it reads again anyway.
    static let eventPollInterval = Duration.seconds(1)

    /// Opens the store at `url`: connects once (an unreachable server, wrong credentials, a
    /// missing database fail here, in one sentence), checks the schema, and starts the pool.
    /// - Parameter migrations: the migrations this build knows (tests pass fewer or more).
    /// - Throws: ``StoreError``: `.unusable` (cannot connect, no schema, an older schema, another
    ///   application's tables) or `.newerSchema`.
    public static func open(
        _ url: StoreURL, migrations: [Migration] = Migration.all,
        logger: Logger = .postgres
    ) async throws(StoreError) -> PostgresQueueStore {
        let found = try await withConnection(to: url, logger: logger) { connection in
            try await Schema.inspect(connection, logger: logger)
        }
        try Schema.check(found, url: url, migrations: migrations)
        return try PostgresQueueStore(url: url, logger: logger)
    }

    /// Creates or upgrades the schema at `url` (`jobrunner migrate`); returns the versions
    /// before and after.
    public static func migrate(
        _ url: StoreURL, migrations: [Migration] = Migration.all, appliedBy: String,
        logger: Logger = .postgres
    ) async throws(StoreError) -> (from: Int, to: Int) {
        try await withConnection(to: url, logger: logger) { connection in
            try await Schema.migrate(
                connection, url: url, migrations: migrations, appliedBy: appliedBy, logger: logger)
        }
    }

    /// Runs `body` on a connection of its own, closed after.
    static func withConnection<Result: Sendable>(
        to url: StoreURL, logger: Logger, _ body: (PostgresConnection) async throws -> Result
    ) async throws(StoreError) -> Result {
        let configuration = try url.connection()
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                on: PostgresConnection.defaultEventLoopGroup.any(), configuration: configuration, id: 1,
                logger: logger
            ).get()
        } catch {
            throw PostgresFailure.connecting(error, to: url)
        }
        do {
            let result = try await body(connection)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw PostgresFailure.query(error, doing: "reading its schema", on: url)
        }
    }

    private init(url: StoreURL, logger: Logger) throws(StoreError) {
        self.url = url
        self.logger = logger
        var configuration = try url.client()
        configuration.options.maximumConnections = 8
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        // The pool works only while `run()` does; it lives as long as the store, which cancels
        // it in `close()`.
        pool = Task { await client.run() }
        writer = Writer()
        writer.start(store: self)
    }

    deinit { pool.cancel() }

    /// Lets the writer finish what was submitted, then closes the pool and the listening
    /// connection.
    public func close() async {
        await writer.close()
        eventListener.withLock { $0 }?.stop()
        pool.cancel()
    }

    // MARK: Ownership and writing

    public func claim(owner: String) async throws(StoreError) -> StoreClaim {
        let fencing: Int64 = try await run("granting a claim") { client in
            var binds = PostgresBindings()
            binds.append(owner)
            let rows = try await client.query(
                PostgresQuery(unsafeSQL: SQL.claim, binds: binds), logger: logger)
            for try await (number) in rows.decode(Int64.self) { return number }
            throw StoreError(.io, "the store \(url) granted no claim")
        }
        return StoreClaim(owner: owner, fencing: UInt64(fencing))
    }

    public func submit(
        _ changes: [StoreChange], under claim: StoreClaim,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        writer.submit(Writer.Submission(changes: changes, claim: claim, completion: completion))
    }

    public func post(_ requests: [OperatorRequest], runID: String) async throws(StoreError) {
        try await writer.commit(requests.map { .putRequest(runID: runID, $0) })
    }

    public func prune(runs ids: [String]) async throws(StoreError) {
        try await writer.commit(ids.map(StoreChange.deleteRun))
    }

    public func updatePipeline(_ name: String, _ change: @Sendable (inout PipelineRecord) -> Void)
        async throws(StoreError) -> PipelineRecord
    {
        let record: PipelineRecord = try await transaction("changing pipeline \(name)") { connection in
            let encoder = JSONEncoder()
            var binds = PostgresBindings()
            binds.append(name)
            binds.append(String(decoding: try encoder.encode(PipelineRecord(name: name)), as: UTF8.self))
            try await connection.query(
                PostgresQuery(unsafeSQL: SQL.ensurePipeline, binds: binds), logger: logger)
            binds = PostgresBindings()
            binds.append(name)
            var record = PipelineRecord(name: name)
            let rows = try await connection.query(
                PostgresQuery(unsafeSQL: SQL.lockPipeline, binds: binds), logger: logger)
            for try await (text) in rows.decode(String.self) {
                record = try JSONDecoder().decode(PipelineRecord.self, from: Data(text.utf8))
            }
            change(&record)
            var batch = BatchRows(committedAt: Date())
            try batch.add(.putPipeline(record))
            try await batch.write(on: connection, logger: logger)
            try await appendEvents(batch.events, on: connection)
            return record
        }
        followers.wake()
        return record
    }

    // MARK: Running statements

    /// Runs `body` with the pool, turning its errors into a ``StoreError`` about `what`.
    func run<Result: Sendable>(_ what: String, _ body: (PostgresClient) async throws -> Result)
        async throws(StoreError) -> Result
    {
        do {
            return try await body(client)
        } catch {
            throw PostgresFailure.query(error, doing: what, on: url)
        }
    }

    /// Runs `body` in a transaction on one connection of the pool: committed when it returns,
    /// rolled back when it throws.
    func transaction<Result: Sendable>(
        _ what: String, readOnly: Bool = false, _ body: (PostgresConnection) async throws -> Result
    ) async throws(StoreError) -> Result {
        let logger = self.logger
        return try await run(what) { client in
            try await client.withConnection { connection in
                // Reads see one committed state across their statements.
                let begin = readOnly ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN"
                try await connection.query(PostgresQuery(unsafeSQL: begin), logger: logger)
                do {
                    let result = try await body(connection)
                    try await connection.query("COMMIT", logger: logger)
                    return result
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        }
    }
}
