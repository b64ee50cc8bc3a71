import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

/// Periodic occurrences across a runner killed with `kill -9` (SPEC 1, 5.8): each occurrence
/// decided before the kill runs once after it, as a run of its own, none twice.
@Suite struct PeriodicCrashTests {
    let periodicTests = PeriodicRunnerTests()

    func occurrenceDates(_ store: any QueueStore, of jobID: String, from origin: Date) async throws
        -> [Double]
    {
        try await periodicTests.occurrenceRuns(store).filter { $0.occurrenceOf == jobID }.compactMap {
            $0.scheduledAt?.timeIntervalSince(origin)
        }
    }

    /// Whether a commit stores the run of an occurrence.
    static func startsAnOccurrence(_ changes: [StoreChange]) -> Bool {
        changes.contains {
            if case .putRun(let run) = $0 { return run.occurrenceOf != nil }
            return false
        }
    }

    @Test func aCatchUpBacklogIsNotLostWhenTheRunnerIsKilled() async throws {
        let store = InMemoryQueueStore()
        let first = Harness(store: CrashingStore(store, crashAfter: Self.startsAnOccurrence))
        // Last scheduled 1000 s ago: 300, 600 and 900 s after that date were missed.
        let origin = first.clock.now().addingTimeInterval(-1000)
        try await store.commitAsNewOwner([
            .putSchedule(
                ScheduleRecord(jobID: "c", anchor: origin, lastScheduled: origin, schedule: "every 300.0s"))
        ])
        let periodic = [everyMinute("c", catchUp: .all, seconds: 300)]
        // Killed once the first of the three has its run.
        await #expect(throws: StoreError.self) {
            try await periodicTests.runner(first, [job("c")], periodic: periodic).run()
        }
        let second = Harness(store: store)
        _ = try await periodicTests.runner(second, [job("c")], periodic: periodic).run()
        #expect(try await occurrenceDates(store, of: "c", from: origin) == [300, 600, 900])
        #expect(
            try await periodicTests.occurrenceRuns(store).map(\.state) == [
                .succeeded, .succeeded, .succeeded,
            ])
        #expect(second.handler.startedJobs.count == 3, "300 resumed, then 600 and 900, each once")
    }

    @Test func aQueuedOccurrenceIsNotLostWhenTheRunnerIsKilled() async throws {
        let store = InMemoryQueueStore()
        let origin = Date(timeIntervalSince1970: 1_800_000_000)
        let queuedStored: @Sendable ([StoreChange]) -> Bool = { changes in
            changes.contains {
                if case .putSchedule(let record) = $0 { return record.lastScheduled == origin + 60 }
                return false
            }
        }
        let crashing = CrashingStore(store, crashAfter: queuedStored)
        let handler = ScriptedHandler(hold: ["q"])
        let first = Harness(store: crashing, handler: handler)
        let periodic = [everyMinute("q", overlap: .queue)]
        let runner = periodicTests.runner(first, [job("q")], periodic: periodic, serve: true)
        let task = Task { try await runner.run() }
        await handler.waitForStarts(1)
        await first.clock.waitForSleepers()
        first.clock.advance(by: 60)
        // Killed once 60 is queued behind 0, which still runs.
        await crashing.crashed()
        runner.requestStop(signal: SIGTERM)
        await #expect(throws: StoreError.self) { try await task.value }
        let second = Harness(store: store)
        second.clock.advance(by: 60)
        _ = try await periodicTests.runner(second, [job("q")], periodic: periodic).run()
        #expect(try await occurrenceDates(store, of: "q", from: origin) == [0, 60])
        #expect(try await periodicTests.occurrenceRuns(store).map(\.state) == [.succeeded, .succeeded])
        #expect(second.handler.startedJobs == ["q", "q"], "0 resumed, then 60")
    }

    @Test func anOccurrenceHeldForItsNeedsIsNotLostWhenTheRunnerIsKilled() async throws {
        let store = InMemoryQueueStore()
        let origin = Date(timeIntervalSince1970: 1_800_000_000)
        let scheduled: @Sendable ([StoreChange]) -> Bool = { changes in
            changes.contains {
                if case .putSchedule = $0 { return true }
                return false
            }
        }
        let crashing = CrashingStore(store, crashAfter: scheduled)
        let handler = ScriptedHandler(hold: ["setup"])
        let first = Harness(store: crashing, handler: handler)
        var downstream = job("d")
        downstream.needs = ["setup"]
        let jobs = [job("setup"), downstream]
        let periodic = [everyMinute("d")]
        let runner = periodicTests.runner(first, jobs, periodic: periodic)
        let task = Task { try await runner.run() }
        // Killed while d waits for setup, before it has a run.
        await crashing.crashed()
        runner.requestStop(signal: SIGTERM)
        await #expect(throws: StoreError.self) { try await task.value }
        let second = Harness(store: store)
        _ = try await periodicTests.runner(second, jobs, periodic: periodic).run()
        #expect(try await occurrenceDates(store, of: "d", from: origin) == [0])
        #expect(second.handler.startedJobs == ["setup", "d"])
    }
}
