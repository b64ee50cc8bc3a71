/// The events a store committed after a sequence number, as they come
/// (``ReadModel/events(after:)``): read in pages, and awaited when there are no more. Events
/// the store let go before they were read come as one ``CommittedEvent/Change/missed(through:)``.
/// Ends (nil) when the reading task is cancelled.
public struct CommittedEvents: AsyncSequence, Sendable {
    public typealias Element = CommittedEvent
    public typealias Failure = StoreError

    let store: any QueueStore
    let after: UInt64

    /// How many events are read at once.
    static let page = 512

    public func makeAsyncIterator() -> Iterator {
        Iterator(store: store, last: after)
    }

    /// Reads the events in pages.
    public struct Iterator: AsyncIteratorProtocol {
        let store: any QueueStore
        /// The sequence number of the last event handed out.
        var last: UInt64
        var buffer: [CommittedEvent] = []
        var next = 0

        /// How many events this iterator holds already: ``next()`` hands them out without
        /// reading the store or waiting (a follower groups them into one write).
        public var buffered: Int { buffer.count - next }

        public mutating func next() async throws(StoreError) -> CommittedEvent? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(StoreError)
            -> CommittedEvent?
        {
            while true {
                if next < buffer.count {
                    defer { next += 1 }
                    last = buffer[next].sequence
                    return buffer[next]
                }
                if Task.isCancelled { return nil }
                buffer = try await store.events(after: last, limit: CommittedEvents.page)
                next = 0
                if let first = buffer.first, first.sequence > last + 1 {
                    let through = first.sequence - 1
                    buffer.insert(
                        CommittedEvent(
                            sequence: through, committedAt: first.committedAt,
                            change: .missed(through: through)),
                        at: 0)
                }
                if buffer.isEmpty { await store.waitForEvents(after: last) }
            }
        }
    }
}
