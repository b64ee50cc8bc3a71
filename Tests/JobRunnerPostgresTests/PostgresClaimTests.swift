import Foundation
import JobRunnerCore
import JobRunnerPostgres
import JobRunnerTesting
import Testing

/// Claims are fenced by the database, not by a process's memory: two stores opened on one
/// database (as two hosts would) see each other's claims.
@Suite(.enabled(if: ThrowawayPostgres.unavailable == nil, ThrowawayPostgres.skipComment))
struct PostgresClaimTests {
    @Test func aClaimTakenThroughAnotherConnectionRefusesTheOldOwnersCommits() async throws {
        let url = try StoreURL(try await ThrowawayPostgres.shared().makeDatabase())
        _ = try await PostgresQueueStore.migrate(url, appliedBy: "tests")
        let hostA = try await PostgresQueueStore.open(url)
        let hostB = try await PostgresQueueStore.open(url)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let run = RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1)

        let first = try await hostA.claim(owner: "runner 1 on a")
        try await hostA.commit([.putRun(run), .setCurrentRun("R")], under: first)
        let second = try await hostB.claim(owner: "runner 2 on b")
        #expect(second.fencing == first.fencing + 1)
        let events = try await hostA.latestEventSequence()

        var closed = run
        closed.state = .failed
        let refused = await #expect(throws: StoreError.self) {
            try await hostA.commit([.putRun(closed)], under: first)
        }
        #expect(refused?.code == .staleClaim)
        #expect(refused?.message.contains("runner 2 on b") == true)
        #expect(try await hostB.run(id: "R")?.state == .running, "nothing of the stale commit was written")
        #expect(try await hostB.latestEventSequence() == events)

        try await hostB.commit([.putRun(closed)], under: second)
        #expect(try await hostA.run(id: "R")?.state == .failed, "each host reads what the other committed")
        await hostA.close()
        await hostB.close()
    }

    /// A follower of one store is woken by a commit made through another one (a notification
    /// on `jobrunner_events`, else its poll), and reads the event.
    @Test func aFollowerHearsTheCommitsOfAnotherStore() async throws {
        let url = try StoreURL(try await ThrowawayPostgres.shared().makeDatabase())
        _ = try await PostgresQueueStore.migrate(url, appliedBy: "tests")
        let reader = try await PostgresQueueStore.open(url)
        let writer = try await PostgresQueueStore.open(url)
        let model = ReadModel(store: reader, lock: nil, logs: LogLocation(stateDirectory: "/nowhere"))
        let follower = Task {
            var iterator = model.events(after: 0).makeAsyncIterator()
            return try await iterator.next()
        }
        try await writer.commitAsNewOwner([.putPipeline(PipelineRecord(name: "elsewhere", suspended: 1))])
        let event = try #require(try await follower.value)
        #expect(event.change == .pipeline(name: "elsewhere", suspended: 1))
        await reader.close()
        await writer.close()
    }
}
