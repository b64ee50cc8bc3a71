import Foundation
import JobRunnerCore
import Synchronization

/// Follows the store's committed events once and hands them to every SSE client, each through a
/// bounded buffer of its own: a client that falls that far behind (a slow or stalled reader)
/// is dropped, and the runner never waits for any. A dropped client resumes from the store with
/// `Last-Event-ID`.
///
/// Events read from the store together go out together, as one ``Batch`` and one write per
/// client: one item and one socket write per event and client made 50 clients of a 20,000-job
/// run three million of each.
public final class EventHub: Sendable {
    /// What a client gets.
    public enum Item: Sendable {
        /// Events in order, with their frames on the stream made once for every client.
        case events(Batch)
        /// Nothing happened for a while: a comment line keeps the connection.
        case heartbeat

        /// How much of a client's buffer the item takes: an event each, a heartbeat one.
        var weight: Int {
            switch self {
            case .events(let batch): max(1, batch.sequences.count)
            case .heartbeat: 1
            }
        }
    }

    /// Consecutive events and their frames (``EventStream/frame(_:into:)``; none for a change
    /// that makes no event of its own).
    public struct Batch: Sendable {
        /// Each event's sequence number, in order.
        public private(set) var sequences: [UInt64] = []
        /// The events' frames, one after the other.
        private var frames: [UInt8] = []
        /// Where each event's frame ends in ``frames``.
        private var ends: [Int] = []

        public init() {}

        /// Adds the next event and its frame.
        public mutating func append(_ event: CommittedEvent) {
            EventStream.frame(event, into: &frames)
            sequences.append(event.sequence)
            ends.append(frames.count)
        }

        /// The sequence number of the batch's last event; 0 when empty.
        public var last: UInt64 { sequences.last ?? 0 }

        /// The frames of the events after `sequence` (a client that read the ones before from
        /// the store skips them).
        public func frames(after sequence: UInt64) -> ArraySlice<UInt8> {
            guard let first = sequences.firstIndex(where: { $0 > sequence }) else { return [] }
            return frames[(first == 0 ? 0 : ends[first - 1])...]
        }
    }

    /// Events from the store go out in batches of at most this many.
    static let batchLimit = 256

    /// A client's place in the hub.
    public final class Subscription: Sendable {
        /// The sequence number the hub had handed out when the client joined: the client reads
        /// what came before from the store, and what comes after from ``items``.
        public let joinedAfter: UInt64
        /// The events after ``joinedAfter``; ends when the client is dropped or leaves.
        public var items: Items { Items(subscription: self) }
        private let stream: AsyncStream<Item>
        fileprivate let continuation: AsyncStream<Item>.Continuation
        private let droppedFlag = Atomic<Bool>(false)
        /// How many events wait in the buffer (heartbeats count one).
        private let waiting = Atomic<Int>(0)
        private let capacity: Int

        fileprivate init(joinedAfter: UInt64, capacity: Int) {
            self.joinedAfter = joinedAfter
            self.capacity = capacity
            (stream, continuation) = AsyncStream.makeStream(of: Item.self)
        }

        /// Whether the hub dropped this client for falling behind.
        public var dropped: Bool { droppedFlag.load(ordering: .acquiring) }

        /// Hands `item` over; false when it would take the client's buffer past its capacity,
        /// and the client is dropped (what it holds still reaches it, then its stream ends).
        fileprivate func offer(_ item: Item) -> Bool {
            let weight = item.weight
            if waiting.add(weight, ordering: .relaxed).newValue > capacity {
                droppedFlag.store(true, ordering: .releasing)
                continuation.finish()
                return false
            }
            continuation.yield(item)
            return true
        }

        /// The client's items as it takes them: each frees its place in the buffer.
        public struct Items: AsyncSequence, Sendable {
            fileprivate let subscription: Subscription

            public func makeAsyncIterator() -> Iterator {
                Iterator(base: subscription.stream.makeAsyncIterator(), subscription: subscription)
            }

            public struct Iterator: AsyncIteratorProtocol {
                var base: AsyncStream<Item>.Iterator
                let subscription: Subscription

                public mutating func next() async -> Item? {
                    guard let item = await base.next() else { return nil }
                    subscription.waiting.subtract(item.weight, ordering: .relaxed)
                    return item
                }
            }
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
            var events = reader.events(after: start).makeAsyncIterator()
            while let first = try await events.next() {
                var batch = Batch()
                var event = first
                while true {
                    await onEvent(event)
                    batch.append(event)
                    guard events.buffered > 0, batch.sequences.count < Self.batchLimit,
                        let next = try await events.next()
                    else { break }
                    event = next
                }
                deliver(.events(batch), sequence: batch.last)
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
