import Foundation
import JobRunnerCore
import Logging
import PostgresNIO
import Synchronization

extension PostgresQueueStore {
    /// Numbers a commit's events and stores them as one row, in the caller's transaction; lets
    /// the oldest go beyond those kept, and notifies the followers at commit.
    func appendEvents(_ batch: CommittedEvent.Batch, on connection: PostgresConnection) async throws {
        var batch = batch
        guard batch.count > 0 else { return }
        var binds = PostgresBindings()
        binds.append(Int64(batch.count))
        var last: Int64 = 0
        for try await (number) in try await connection.query(
            PostgresQuery(unsafeSQL: SQL.takeEventNumbers, binds: binds), logger: logger
        ).decode(Int64.self) {
            last = number
        }
        binds = PostgresBindings()
        binds.append(last)
        binds.append(String(decoding: batch.finish(), as: UTF8.self))
        try await connection.query(PostgresQuery(unsafeSQL: SQL.putEvents, binds: binds), logger: logger)
        let kept = Int64(CommittedEvent.kept)
        if last >= kept {
            binds = PostgresBindings()
            binds.append(last - kept)
            try await connection.query(
                PostgresQuery(unsafeSQL: SQL.dropOldEvents, binds: binds), logger: logger)
        }
        binds = PostgresBindings()
        binds.append(String(last))
        try await connection.query(PostgresQuery(unsafeSQL: SQL.notifyEvents, binds: binds), logger: logger)
    }

    public func events(after sequence: UInt64, limit: Int) async throws(StoreError) -> [CommittedEvent] {
        guard limit > 0 else { return [] }
        let url = self.url
        return try await run("reading events") { client in
            var binds = PostgresBindings()
            binds.append(Int64(clamping: sequence))
            // Each row holds one event at least.
            binds.append(Int64(limit))
            var events: [CommittedEvent] = []
            for try await (last, batch) in try await client.query(
                PostgresQuery(unsafeSQL: SQL.eventsAfter, binds: binds), logger: logger
            ).decode((Int64, String).self) {
                let decoded: [CommittedEvent]
                do {
                    decoded = try CommittedEvent.events(inBatch: Array(batch.utf8), last: UInt64(last))
                } catch {
                    throw StoreError(
                        .corrupt, "the store \(url) holds events that cannot be read (\(error))", cause: error
                    )
                }
                events.append(contentsOf: decoded.lazy.filter { $0.sequence > sequence })
            }
            return Array(events.prefix(limit))
        }
    }

    public func latestEventSequence() async throws(StoreError) -> UInt64 {
        try await run("reading the last event's number") { client in
            for try await (last) in try await client.query(
                PostgresQuery(unsafeSQL: SQL.latestEvent), logger: logger
            )
            .decode(Int64.self) {
                return UInt64(last)
            }
            return 0
        }
    }

    /// Returns once a commit of this process made events, a notification from another process
    /// says one did, or ``eventPollInterval`` passed (a notification lost while the listening
    /// connection was down is not waited for).
    public func waitForEvents(after sequence: UInt64) async {
        startListeningForEvents()
        let generation = followers.generation
        if let latest = try? await latestEventSequence(), latest > sequence { return }
        let followers = self.followers
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await followers.wait(since: generation) }
            group.addTask { try? await Task.sleep(for: Self.eventPollInterval) }
            await group.next()
            group.cancelAll()
        }
    }

    private func startListeningForEvents() {
        let followers = self.followers
        let url = self.url
        let logger = self.logger
        eventListener.withLock { listener in
            guard listener == nil else { return }
            listener = NotificationListener(url: url, channel: Channels.events, logger: logger) {
                followers.wake()
            }
        }
    }
}

/// The readers waiting for the next commit, woken all at once.
final class Followers: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    /// Goes up with each wake-up.
    var generation: UInt64 { state.withLock { $0.generation } }

    func wake() {
        let waiters = state.withLock { state in
            state.generation &+= 1
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns at the first wake-up after `generation` (at once if there was one), or when the
    /// task is cancelled.
    func wait(since generation: UInt64) async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.generation != generation || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
