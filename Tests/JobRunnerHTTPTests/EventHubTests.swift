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

    @Test func aStalledClientIsDroppedAndTheOthersGoOn() async {
        let hub = Self.hub(capacity: 3)
        let stalled = hub.subscribe()
        let reading = hub.subscribe()
        var iterator = reading.items.makeAsyncIterator()
        for sequence in UInt64(1)...10 {
            hub.deliver(.event(Self.event(sequence), frame: []), sequence: sequence)
            guard case .event(let got, _) = await iterator.next() else {
                Issue.record("the reading client's stream ended")
                return
            }
            #expect(got.sequence == sequence)
        }
        #expect(stalled.dropped)
        #expect(!reading.dropped)
        #expect(hub.clientCount == 1)
        // The dropped client still gets what its buffer held, then its stream ends: it resumes
        // with the last id it saw.
        var seen: [UInt64] = []
        for await item in stalled.items {
            if case .event(let event, _) = item { seen.append(event.sequence) }
        }
        #expect(seen == [1, 2, 3])
    }

    @Test func aClientJoinsAfterTheLatestEventHandedOut() {
        let hub = Self.hub(capacity: 8)
        hub.start(after: 41)
        #expect(hub.subscribe().joinedAfter == 41)
        hub.deliver(.event(Self.event(42), frame: []), sequence: 42)
        #expect(hub.subscribe().joinedAfter == 42)
    }
}

/// The hub's end at shutdown: the clients get the events committed so far, then their streams end.
@Suite struct EventHubClosingTests {
    @Test func closingWaitsForTheEventsCommittedSoFar() async {
        let hub = EventHubTests.hub(capacity: 8)
        let client = hub.subscribe()
        hub.deliver(.event(EventHubTests.event(1), frame: []), sequence: 1)
        hub.close(after: 3)
        hub.deliver(.event(EventHubTests.event(2), frame: []), sequence: 2)
        hub.deliver(.event(EventHubTests.event(3), frame: []), sequence: 3)
        hub.deliver(.event(EventHubTests.event(4), frame: []), sequence: 4)
        var seen: [UInt64] = []
        for await item in client.items { if case .event(let event, _) = item { seen.append(event.sequence) } }
        #expect(seen == [1, 2, 3])
        #expect(!client.dropped)
        // A client that comes after the end gets a stream that has ended.
        var late = hub.subscribe().items.makeAsyncIterator()
        #expect(await late.next() == nil)
    }
}
