import Foundation
import JobRunnerCore
import Logging
import PostgresNIO

/// The attempts a store's hosts share (SPEC 8, schema 2): the deciding runner queues each
/// attempt as a row of `queued_attempts`; any host's worker claims rows (`FOR UPDATE SKIP
/// LOCKED`), renews its lease on them, and completes them under the fencing number its claim
/// got. Every statement is in `SQL.swift`.
public struct PostgresAttemptSharing: AttemptSharing {
    let store: PostgresQueueStore
    /// This host's name in the store: `HOST:PID`, unique among live hosts.
    let host: String
    let timing: LeaseTiming

    /// - Parameter store: an open store, which must outlive what is made here.
    public init(store: PostgresQueueStore, host: String, timing: LeaseTiming) {
        self.store = store
        self.host = host
        self.timing = timing
    }

    public func queueing(logDirectory: String) -> any JobHandler {
        QueueingHandler(
            queue: AttemptQueue(store: store), board: ResultBoard(queue: AttemptQueue(store: store)),
            logDirectory: logDirectory)
    }

    public func work(
        with handler: any JobHandler, jobs: @escaping @Sendable (String) -> JobDefinition?,
        logDirectory: String, slots: Int
    ) -> any AttemptWorking {
        AttemptWorker(
            queue: AttemptQueue(store: store), host: host, timing: timing, handler: handler, jobs: jobs,
            logDirectory: logDirectory, slots: slots)
    }

    /// Lets go of what earlier deciding runners queued: nobody waits for it any more. Queued
    /// attempts go; running ones are ended by their hosts. Called by a runner that has just
    /// taken the store, before it decides anything.
    public func abandonEarlierAttempts() async throws(StoreError) {
        try await store.transaction("letting go of an earlier runner's attempts") { connection in
            for statement in SQL.abandonAttempts {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: store.logger)
            }
        }
    }
}

/// How often a host renews its leases, and for how long each renewal holds
/// (`--heartbeat`, `--lease`).
public struct LeaseTiming: Sendable, Hashable {
    public var heartbeat: Duration
    public var lease: Duration
    /// How long after a lease ends another host may take the attempt back: the host that lost
    /// it ends its children when its lease ends, this long before.
    public var grace: Duration

    public init(
        heartbeat: Duration = .seconds(5), lease: Duration = .seconds(30), grace: Duration = .seconds(10)
    ) {
        self.heartbeat = heartbeat
        self.lease = lease
        self.grace = grace
    }
}

/// What a queued row holds of an ``AttemptRequest``: paths relative to the deciding runner's
/// log directory, so each host writes under its own.
struct SharedRequest: Codable, Sendable {
    var runID: String
    var jobID: String
    var attempt: Int
    var logPath: String
    var workDirectory: String
    var neededOutputs: [String: [String: String]]

    init(_ request: AttemptRequest, logDirectory: String) {
        runID = request.runID
        jobID = request.job.id
        attempt = request.attempt
        logPath = Self.relative(request.logPath, to: logDirectory)
        workDirectory = Self.relative(request.workDirectory, to: logDirectory)
        neededOutputs = request.neededOutputs
    }

    /// The request as this host runs it: `job` from its own job files, paths under its own
    /// log directory.
    func request(job: JobDefinition, logDirectory: String) -> AttemptRequest {
        AttemptRequest(
            runID: runID, job: job, attempt: attempt, logPath: Self.absolute(logPath, in: logDirectory),
            workDirectory: Self.absolute(workDirectory, in: logDirectory), neededOutputs: neededOutputs)
    }

    private static func relative(_ path: String, to directory: String) -> String {
        path.hasPrefix(directory + "/") ? String(path.dropFirst(directory.count + 1)) : path
    }

    private static func absolute(_ path: String, in directory: String) -> String {
        path.hasPrefix("/") ? path : "\(directory)/\(path)"
    }
}

/// A claimed row.
struct ClaimedAttempt: Sendable {
    var id: Int64
    var fencing: Int64
    var request: SharedRequest
}

/// The statements on `queued_attempts` and `hosts`.
struct AttemptQueue: Sendable {
    let store: PostgresQueueStore

    private var logger: Logger { store.logger }

    func queue(_ request: SharedRequest) async throws(StoreError) -> Int64 {
        let text = try Self.json(request)
        return try await store.run("queueing attempt \(request.attempt) of \(request.jobID)") { client in
            var binds = PostgresBindings()
            binds.append(request.runID)
            binds.append(request.jobID)
            binds.append(Int32(request.attempt))
            binds.append(text)
            let rows = try await client.query(
                PostgresQuery(unsafeSQL: SQL.queueAttempt, binds: binds), logger: logger)
            for try await (id, _) in rows.decode((Int64, String).self) { return id }
            throw StoreError(.io, "the store \(store.url) queued no attempt")
        }
    }

    func claim(host: String, limit: Int, lease: Duration) async throws(StoreError) -> [ClaimedAttempt] {
        try await store.run("claiming attempts") { client in
            var binds = PostgresBindings()
            binds.append(host)
            binds.append(Int64(limit))
            binds.append(Self.milliseconds(lease))
            var claimed: [ClaimedAttempt] = []
            let rows = try await client.query(
                PostgresQuery(unsafeSQL: SQL.claimAttempts, binds: binds), logger: logger)
            for try await (id, fencing, text) in rows.decode((Int64, Int64, String).self) {
                let request = try JSONDecoder().decode(SharedRequest.self, from: Data(text.utf8))
                claimed.append(ClaimedAttempt(id: id, fencing: fencing, request: request))
            }
            return claimed.sorted { $0.id < $1.id }
        }
    }

    /// Renews `host`'s leases; returns the attempts it still holds, and which are cancelled.
    func renew(host: String, lease: Duration) async throws(StoreError) -> [Int64: (
        fencing: Int64, cancel: Bool
    )] {
        try await store.run("renewing the leases of \(host)") { client in
            var binds = PostgresBindings()
            binds.append(host)
            binds.append(Self.milliseconds(lease))
            var held: [Int64: (fencing: Int64, cancel: Bool)] = [:]
            let rows = try await client.query(
                PostgresQuery(unsafeSQL: SQL.renewLeases, binds: binds), logger: logger)
            for try await (id, fencing, cancel) in rows.decode((Int64, Int64, Bool).self) {
                held[id] = (fencing, cancel)
            }
            return held
        }
    }

    func cancelled(host: String) async throws(StoreError) -> [Int64: Int64] {
        try await store.run("reading the cancelled attempts of \(host)") { client in
            var binds = PostgresBindings()
            binds.append(host)
            var found: [Int64: Int64] = [:]
            let rows = try await client.query(
                PostgresQuery(unsafeSQL: SQL.cancelledAttempts, binds: binds), logger: logger)
            for try await (id, fencing) in rows.decode((Int64, Int64).self) { found[id] = fencing }
            return found
        }
    }

    /// Completes an attempt; false when the store refused it as stale.
    func complete(id: Int64, fencing: Int64, _ result: AttemptResult) async throws(StoreError) -> Bool {
        let text = try Self.json(result)
        return try await store.run("completing an attempt") { client in
            var binds = PostgresBindings()
            binds.append(id)
            binds.append(fencing)
            binds.append(text)
            let rows = try await client.query(
                PostgresQuery(unsafeSQL: SQL.completeAttempt, binds: binds), logger: logger)
            for try await _ in rows.decode((Int64, String).self) { return true }
            return false
        }
    }

    func cancel(id: Int64) async throws(StoreError) {
        let text = try Self.json(AttemptResult(.interrupted(.runnerStoppedBeforeStart)))
        try await store.run("cancelling an attempt") { client in
            var binds = PostgresBindings()
            binds.append(id)
            binds.append(text)
            try await client.query(PostgresQuery(unsafeSQL: SQL.cancelAttempt, binds: binds), logger: logger)
        }
    }

    /// The results of `ids` that are there, taken (deleted) as they are read.
    func takeResults(_ ids: [Int64]) async throws(StoreError) -> [Int64: AttemptResult] {
        try await store.run("reading the attempts' results") { client in
            var binds = PostgresBindings()
            binds.append(ids)
            var results: [Int64: AttemptResult] = [:]
            let rows = try await client.query(
                PostgresQuery(unsafeSQL: SQL.takeResults, binds: binds), logger: logger)
            for try await (id, text) in rows.decode((Int64, String?).self) {
                results[id] =
                    (try? JSONDecoder().decode(AttemptResult.self, from: Data((text ?? "").utf8)))
                    ?? AttemptResult(.interrupted(.runnerGone))
            }
            return results
        }
    }

    /// Puts back in the queue the attempts whose lease ended more than `grace` ago.
    func rescue(grace: Duration) async throws(StoreError) -> Int {
        try await store.run("taking back the attempts of lost hosts") { client in
            var binds = PostgresBindings()
            binds.append(Self.milliseconds(grace))
            var count = 0
            let rows = try await client.query(
                PostgresQuery(unsafeSQL: SQL.rescueAttempts, binds: binds), logger: logger)
            for try await _ in rows.decode(Int64.self) { count += 1 }
            return count
        }
    }

    func heartbeat(host: String, running: Int, completed: Int) async throws(StoreError) {
        try await store.run("recording the heartbeat of \(host)") { client in
            var binds = PostgresBindings()
            binds.append(host)
            binds.append(Int32(getpid()))
            binds.append(Int32(running))
            binds.append(Int64(completed))
            try await client.query(PostgresQuery(unsafeSQL: SQL.heartbeat, binds: binds), logger: logger)
        }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    static func json<Value: Encodable>(_ value: Value) throws(StoreError) -> String {
        do {
            return String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        } catch {
            throw StoreError(.io, "cannot encode a shared attempt: \(error)", cause: error)
        }
    }
}
