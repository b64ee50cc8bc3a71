import Foundation
import JobRunnerCore
import Synchronization

/// Follows the store's committed events once and hands each to every SSE client, each through a
/// bounded buffer of its own: a client that falls that far behind (a slow or stalled reader)
/// is dropped, and the runner never waits for any. A dropped client resumes from the store with
/// `Last-Event-ID`.
public final class EventHub: Sendable {
    /// What a client gets.
    public enum Item: Sendable {
        /// An event and its frame on the stream (``EventStream/frame(_:into:)``), made once for
        /// every client; empty for a change that makes no event of its own.
        case event(CommittedEvent, frame: [UInt8])
        /// Nothing happened for a while: a comment line keeps the connection.
        case heartbeat
    }

    /// A client's place in the hub.
    public final class Subscription: Sendable {
        /// The sequence number the hub had handed out when the client joined: the client reads
        /// what came before from the store, and what comes after from ``items``.
        public let joinedAfter: UInt64
        /// The events after ``joinedAfter``; ends when the client is dropped or leaves.
        public let items: AsyncStream<Item>
        fileprivate let continuation: AsyncStream<Item>.Continuation
        private let droppedFlag = Atomic<Bool>(false)

        fileprivate init(joinedAfter: UInt64, capacity: Int) {
            self.joinedAfter = joinedAfter
            (items, continuation) = AsyncStream.makeStream(
                of: Item.self, bufferingPolicy: .bufferingOldest(capacity))
        }

        /// Whether the hub dropped this client for falling behind.
        public var dropped: Bool { droppedFlag.load(ordering: .acquiring) }

        /// Hands `item` over; false when the buffer was full and the client is dropped.
        fileprivate func offer(_ item: Item) -> Bool {
            if case .dropped = continuation.yield(item) {
                droppedFlag.store(true, ordering: .releasing)
                continuation.finish()
                return false
            }
            return true
        }
    }

    private struct State {
        var last: UInt64
        var clients: [ObjectIdentifier: Subscription] = [:]
        /// Closed for the server's shutdown: every stream ends, and new ones end at once.
        var closed = false
        /// Close once the event with this number is handed out.
        var closeAt: UInt64?
    }

    private let reader: ReadModel
    private let capacity: Int
    private let state: Locked<State>
    /// Called with each event, once, before clients get it (metrics).
    private let onEvent: @Sendable (CommittedEvent) async -> Void

    /// - Parameters:
    ///   - capacity: how many items wait for a client before it is dropped.
    public init(
        reader: ReadModel, capacity: Int,
        onEvent: @escaping @Sendable (CommittedEvent) async -> Void = { _ in }
    ) {
        self.reader = reader
        self.capacity = max(1, capacity)
        self.onEvent = onEvent
        state = Locked(State(last: 0))
    }

    /// Sets the sequence number followed from (the store's latest, when the server starts).
    public func start(after sequence: UInt64) {
        state.withLock { $0.last = sequence }
    }

    /// How many clients follow now.
    public var clientCount: Int { state.withLock { $0.clients.count } }

    /// Joins a client.
    public func subscribe() -> Subscription {
        state.withLock { state in
            let subscription = Subscription(joinedAfter: state.last, capacity: capacity)
            if state.closed {
                subscription.continuation.finish()
            } else {
                state.clients[ObjectIdentifier(subscription)] = subscription
            }
            return subscription
        }
    }

    /// Lets a client go.
    public func unsubscribe(_ subscription: Subscription) {
        subscription.continuation.finish()
        _ = state.withLock { $0.clients.removeValue(forKey: ObjectIdentifier(subscription)) }
    }

    /// Follows the store until cancelled, handing every event to every client.
    public func follow() async {
        let start = state.withLock { $0.last }
        do {
            for try await event in reader.events(after: start) {
                await onEvent(event)
                var frame: [UInt8] = []
                EventStream.frame(event, into: &frame)
                deliver(.event(event, frame: frame), sequence: event.sequence)
            }
        } catch {
            // The store failed: the clients end, and resume (from the store) when they come back.
        }
        let clients = state.withLock { state in
            defer { state.clients = [:] }
            return Array(state.clients.values)
        }
        for client in clients { client.continuation.finish() }
    }

    /// Ends every client's stream, now and from now on: the server shuts down, and open event
    /// streams would otherwise keep it waiting for their requests to end.
    public func close() {
        let clients = state.withLock { state in
            state.closed = true
            defer { state.clients = [:] }
            return Array(state.clients.values)
        }
        for client in clients { client.continuation.finish() }
    }

    /// Closes once every event up to `sequence` (the store's latest when the server shuts down)
    /// is handed out, so that the clients see the run's last events before their streams end.
    public func close(after sequence: UInt64) {
        let now = state.withLock { state in
            if state.last >= sequence { return true }
            state.closeAt = sequence
            return false
        }
        if now { close() }
    }

    /// Sends a heartbeat to every client.
    public func beat() { deliver(.heartbeat, sequence: nil) }

    func deliver(_ item: Item, sequence: UInt64?) {
        state.withLock { state in
            if let sequence { state.last = sequence }
            var dropped: [ObjectIdentifier] = []
            for (id, client) in state.clients where !client.offer(item) { dropped.append(id) }
            for id in dropped { state.clients.removeValue(forKey: id) }
        }
        if let sequence, state.withLock({ $0.closeAt.map { sequence >= $0 } ?? false }) { close() }
    }
}
