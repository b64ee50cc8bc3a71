import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerHTTP

/// The event hub's bounded buffers: a client that stops reading is dropped, the others go on,
/// and handing out events never waits for any client.
@Suite struct EventHubTests {
    static func hub(capacity: Int) -> EventHub {
        let store = InMemoryQueueStore()
        return EventHub(
            reader: ReadModel(store: store, lock: nil, logs: LogLocation(stateDirectory: "/nowhere")),
            capacity: capacity)
    }

    static func event(_ sequence: UInt64) -> CommittedEvent {
        CommittedEvent(
            sequence: sequence, committedAt: .init(timeIntervalSince1970: 0), change: .currentRun(id: "r"))
    }

    /// A batch of the events `sequences`.
    static func batch(_ sequences: [UInt64]) -> EventHub.Batch {
        var batch = EventHub.Batch()
        for sequence in sequences { batch.append(event(sequence)) }
        return batch
    }

    static func item(_ sequences: UInt64...) -> EventHub.Item { .events(batch(sequences)) }

    @Test func theBufferCountsEventsNotBatches() async {
        let hub = Self.hub(capacity: 5)
        let stalled = hub.subscribe()
        hub.deliver(Self.item(1, 2, 3), sequence: 3)
        #expect(!stalled.dropped)
        hub.deliver(Self.item(4, 5, 6), sequence: 6)
        #expect(stalled.dropped, "six events wait for a client of five")
        // One that reads frees its places as it takes them.
        let reading = hub.subscribe()
        var iterator = reading.items.makeAsyncIterator()
        for first in stride(from: UInt64(7), to: 30, by: 3) {
            hub.deliver(Self.item(first, first + 1, first + 2), sequence: first + 2)
            guard case .events(let got) = await iterator.next() else {
                Issue.record("the reading client's stream ended")
                return
            }
            #expect(got.sequences == [first, first + 1, first + 2])
        }
        #expect(!reading.dropped)
    }

    @Test func aClientSkipsTheFramesOfEventsItReadFromTheStore() {
        let batch = Self.batch([4, 5, 6])
        let all = String(decoding: batch.frames(after: 3), as: UTF8.self)
        #expect(all.hasPrefix("id: 4\n"), "\(all)")
        let after = String(decoding: batch.frames(after: 4), as: UTF8.self)
        #expect(
            after.hasPrefix("id: 5\n") && after.contains("id: 6\n") && !after.contains("id: 4\n"), "\(after)")
        #expect(batch.frames(after: 6).isEmpty)
        #expect(batch.last == 6)
    }

    @Test func eventsCommittedTogetherReachAClientTogether() async throws {
        let store = InMemoryQueueStore()
        let hub = EventHub(
            reader: ReadModel(store: store, lock: nil, logs: LogLocation(stateDirectory: "/nowhere")),
            capacity: 10_000)
        let client = hub.subscribe()
        let following = Task { await hub.follow() }
        defer { following.cancel() }
        try await store.commit(
            (0..<1_000).map { StoreChange.putPipeline(PipelineRecord(name: "p", suspended: $0)) },
            under: try await store.claim(owner: "test"))
        var items = 0
        var seen: [UInt64] = []
        for await item in client.items {
            guard case .events(let batch) = item else { continue }
            items += 1
            seen += batch.sequences
            if seen.count >= 1_000 { break }
        }
        #expect(seen == Array(1...1_000))
        #expect(items < 1_000 / 100, "\(items) items for 1,000 events")
    }

    @Test func aStalledClientIsDroppedAndTheOthersGoOn() async {
        let hub = Self.hub(capacity: 3)
        let stalled = hub.subscribe()
        let reading = hub.subscribe()
        var iterator = reading.items.makeAsyncIterator()
        for sequence in UInt64(1)...10 {
            hub.deliver(Self.item(sequence), sequence: sequence)
            guard case .events(let got) = await iterator.next() else {
                Issue.record("the reading client's stream ended")
                return
            }
            #expect(got.sequences == [sequence])
        }
        #expect(stalled.dropped)
        #expect(!reading.dropped)
        #expect(hub.clientCount == 1)
        // The dropped client still gets what its buffer held, then its stream ends: it resumes
        // with the last id it saw.
        var seen: [UInt64] = []
        for await item in stalled.items {
            if case .events(let batch) = item { seen += batch.sequences }
        }
        #expect(seen == [1, 2, 3])
    }

    @Test func aClientJoinsAfterTheLatestEventHandedOut() {
        let hub = Self.hub(capacity: 8)
        hub.start(after: 41)
        #expect(hub.subscribe().joinedAfter == 41)
        hub.deliver(Self.item(42), sequence: 42)
        #expect(hub.subscribe().joinedAfter == 42)
    }
}

/// The hub's end at shutdown: the clients get the events committed so far, then their streams end.
@Suite struct EventHubClosingTests {
    @Test func closingWaitsForTheEventsCommittedSoFar() async {
        let hub = EventHubTests.hub(capacity: 8)
        let client = hub.subscribe()
        hub.deliver(EventHubTests.item(1), sequence: 1)
        hub.close(after: 3)
        hub.deliver(EventHubTests.item(2), sequence: 2)
        hub.deliver(EventHubTests.item(3), sequence: 3)
        hub.deliver(EventHubTests.item(4), sequence: 4)
        var seen: [UInt64] = []
        for await item in client.items { if case .events(let batch) = item { seen += batch.sequences } }
        #expect(seen == [1, 2, 3])
        #expect(!client.dropped)
        // A client that comes after the end gets a stream that has ended.
        var late = hub.subscribe().items.makeAsyncIterator()
        #expect(await late.next() == nil)
    }
}
