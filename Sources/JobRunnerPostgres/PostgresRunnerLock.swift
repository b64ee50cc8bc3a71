import Foundation
import JobRunnerCore
import Logging
import PostgresNIO
import Synchronization

/// The runner lock of a PostgreSQL store: session advisory locks held on a connection of
/// their own, so that one runner at a time, on whichever host, works on the store, and the
/// server lets go of the lock when that connection ends (the process died, the host was cut
/// off). The runner's host and pid are kept in the `runner` row for `status` and for the
/// message a second runner gets.
///
/// This is the foundation's lock (one runner per store, any host); runners sharing the store's
/// attempts, each with a lease per attempt, come next (docs/architecture.md, "Many hosts").
public struct PostgresRunnerLock: RunnerLock {
    let url: StoreURL
    let logger: Logger

    public init(url: StoreURL, logger: Logger = .postgres) {
        self.url = url
        self.logger = logger
    }

    public func lockForRunner(whileWaiting: () -> Void) async throws(StoreError) -> any RunnerLockHold {
        let connection = try await connect()
        do {
            // Operator commands at work are waited for, as with the LMDB store's lock file.
            if try await !ask(SQL.tryOperatorLock, on: connection) {
                whileWaiting()
                try await connection.query(PostgresQuery(unsafeSQL: SQL.operatorLock), logger: logger)
            }
            let got = try await ask(SQL.tryRunnerLock, on: connection)
            try await connection.query(PostgresQuery(unsafeSQL: SQL.releaseOperatorLock), logger: logger)
            guard got else {
                let holder = try await runner(on: connection)
                try? await connection.close()
                let who = holder.map { " (pid \($0.pid) on \($0.host))" } ?? ""
                throw StoreError(
                    .locked,
                    "another jobrunner\(who) is working on the store \(url); wait for it to finish, or stop it"
                )
            }
            var binds = PostgresBindings()
            binds.append(ProcessInfo.processInfo.hostName)
            binds.append(Int32(getpid()))
            try await connection.query(PostgresQuery(unsafeSQL: SQL.putRunner, binds: binds), logger: logger)
            return Hold(connection: connection, url: url, logger: logger)
        } catch {
            try? await connection.close()
            throw PostgresFailure.query(error, doing: "taking the runner lock", on: url)
        }
    }

    public func lockForOperator(whileWaiting: () -> Void) async throws(StoreError) -> any OperatorLockHold {
        let connection = try await connect()
        do {
            if try await !ask(SQL.tryOperatorLock, on: connection) {
                whileWaiting()
                try await connection.query(PostgresQuery(unsafeSQL: SQL.operatorLock), logger: logger)
            }
            // No runner can take the runner lock while this one holds the operator lock, so what
            // is seen now lasts until it is released.
            let free = try await ask(SQL.tryRunnerLock, on: connection)
            if free {
                try await connection.query(PostgresQuery(unsafeSQL: SQL.releaseRunnerLock), logger: logger)
            }
            let pid = free ? nil : try await runner(on: connection)?.pid
            return OperatorHold(connection: connection, runnerWorks: !free, runnerPID: pid)
        } catch {
            try? await connection.close()
            throw PostgresFailure.query(error, doing: "taking the operator lock", on: url)
        }
    }

    public func runnerWorks() async -> Bool {
        (try? await withConnection { connection in try await ask(SQL.runnerLockHeld, on: connection) })
            ?? false
    }

    public func runnerPID() async -> Int32? {
        try? await withConnection { connection in
            guard try await ask(SQL.runnerLockHeld, on: connection) else { return nil }
            return try await runner(on: connection)?.pid
        }
    }

    // MARK: Connections and statements

    private func connect() async throws(StoreError) -> PostgresConnection {
        do {
            return try await PostgresConnection.connect(
                on: PostgresConnection.defaultEventLoopGroup.any(), configuration: try url.connection(),
                id: 3,
                logger: logger
            ).get()
        } catch {
            throw PostgresFailure.connecting(error, to: url)
        }
    }

    private func withConnection<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result)
        async throws -> Result
    {
        let connection = try await connect()
        do {
            let result = try await body(connection)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    private func ask(_ sql: String, on connection: PostgresConnection) async throws -> Bool {
        for try await (answer) in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            .decode(Bool.self)
        {
            return answer
        }
        return false
    }

    private func runner(on connection: PostgresConnection) async throws -> (host: String, pid: Int32)? {
        for try await (host, pid) in try await connection.query(
            PostgresQuery(unsafeSQL: SQL.readRunner), logger: logger
        )
        .decode((String, Int32).self) {
            return (host, pid)
        }
        return nil
    }

    /// A held runner lock: the connection that holds it, watched once a second.
    final class Hold: RunnerLockHold {
        private let connection: PostgresConnection
        private let lost = Shared<StoreError?>(nil)
        private let watch: Task<Void, Never>

        init(connection: PostgresConnection, url: StoreURL, logger: Logger) {
            self.connection = connection
            let lost = self.lost
            // Asks the server every second whether the connection, and so the lock, still
            // holds; `verify()` reads the answer.
            watch = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    do {
                        try await connection.query("SELECT 1", logger: logger)
                    } catch {
                        if Task.isCancelled { return }
                        lost.value.withLock {
                            $0 = StoreError(
                                .io,
                                "lost the connection to the store \(url) that held the runner lock; another runner may take over, so this one stops",
                                cause: error)
                        }
                        return
                    }
                }
            }
        }

        deinit {
            watch.cancel()
            Self.close(connection)
        }

        /// Closes a held connection, keeping it until the close ends (postgres-nio traps on a
        /// connection that goes away before it is closed).
        static func close(_ connection: PostgresConnection) {
            connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
        }

        func verify() throws(StoreError) {
            if let error = lost.value.withLock({ $0 }) { throw error }
        }
    }

    /// A held operator lock.
    final class OperatorHold: OperatorLockHold {
        private let connection: PostgresConnection
        let runnerWorks: Bool
        let runnerPID: Int32?

        init(connection: PostgresConnection, runnerWorks: Bool, runnerPID: Int32?) {
            self.connection = connection
            self.runnerWorks = runnerWorks
            self.runnerPID = runnerPID
        }

        deinit { Hold.close(connection) }
    }
}

/// Wakes the runner of a PostgreSQL store with a notification on `jobrunner_wake`, heard on a
/// listening connection of the runner's own; the runner also reads the store every second, in
/// case a notification is lost while that connection is down.
public struct PostgresWaker: RunnerWaker {
    let url: StoreURL
    let logger: Logger

    public init(url: StoreURL, logger: Logger = .postgres) {
        self.url = url
        self.logger = logger
    }

    public func wakeRunner() async {
        guard
            let connection = try? await PostgresConnection.connect(
                on: PostgresConnection.defaultEventLoopGroup.any(), configuration: try url.connection(),
                id: 4,
                logger: logger
            ).get()
        else { return }
        _ = try? await connection.query(PostgresQuery(unsafeSQL: SQL.notifyWake), logger: logger)
        try? await connection.close()
    }

    public func listen(_ wake: @escaping @Sendable () -> Void) -> any WakeListening {
        Listening(listener: NotificationListener(url: url, channel: Channels.wake, logger: logger, wake))
    }

    struct Listening: WakeListening {
        let listener: NotificationListener
        func stop() { listener.stop() }
    }
}
