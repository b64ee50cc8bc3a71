import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

@testable import JobRunnerLMDB

/// A large run's job rows are committed ahead of its opening; until the opening commits, the
/// store reads as before it, and a runner that died in between leaves nothing reachable.
@Suite struct LargeOpeningTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let count = GroupCommitWriter.openingChunk * 2 + 10

    /// An opening as the scheduler makes it: the run, the pointer to it, its new jobs, then a
    /// later write to the first job (its first attempt).
    func opening(_ runID: String, superseding earlier: RunRecord? = nil) -> [StoreChange] {
        let ids = (0..<count).map { "job-\($0)" }
        let plan = RunPlan(jobs: ids.map { RunPlan.Job(id: $0) }, pipelines: [])
        var changes: [StoreChange] = []
        if var earlier {
            earlier.state = .stopped
            changes.append(.putRun(earlier))
        }
        changes += [
            .putRun(RunRecord(id: runID, state: .running, startedAt: start, jobIDs: ids, runnerPID: 1)),
            .setCurrentRun(runID), .putNewJobs(NewJobRecords(runID: runID, plan: plan, now: start)),
            .putJob(runID: runID, JobRecord(jobID: "job-0", pipeline: "p", state: .running, attempts: 1)),
            .putAttempt(runID: runID, AttemptRecord(jobID: "job-0", number: 1, startedAt: start)),
        ]
        return changes
    }

    /// The rows stored under a run's key prefix, the run record aside.
    func storedRows(_ store: LMDBQueueStore, of runID: String) throws -> Int {
        try store.reading { txn, tables, _ in
            var rows = 0
            for dbi in [tables.jobs, tables.attempts] {
                try txn.scanInPlace(dbi, prefix: StoreKey.runPrefix(runID)) { _, _ in rows += 1 }
            }
            return rows
        }
    }

    /// A periodic job's occurrence can open in the same batch as a large run (a runner that
    /// starts with occurrences due): only the large run's rows are written ahead, and the
    /// occurrence's job is still stored.
    @Test func aSmallRunOpenedBesideALargeOneKeepsItsJobs() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LMDBQueueStore(directory: directory + "/db", mapSize: 256 << 20)
        let small = RunPlan(jobs: [RunPlan.Job(id: "tick")], pipelines: [])
        try await store.commitAsNewOwner(
            opening("R") + [
                .putRun(
                    RunRecord(id: "O", state: .running, startedAt: start, jobIDs: ["tick"], runnerPID: 1)),
                .putNewJobs(NewJobRecords(runID: "O", plan: small, now: start)),
            ])
        #expect(try await store.snapshot(runID: "R")?.jobs.count == count)
        #expect(try await store.snapshot(runID: "O")?.jobs["tick"]?.state == .pending)
    }

    @Test func aLargeOpeningIsWholeOnceCommitted() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LMDBQueueStore(directory: directory + "/db", mapSize: 256 << 20)
        try await store.commitAsNewOwner(opening("R"))
        let snapshot = try #require(try await store.currentSnapshot())
        #expect(snapshot.run.id == "R" && snapshot.jobs.count == count)
        #expect(snapshot.jobs["job-0"]?.state == .running && snapshot.jobs["job-1"]?.state == .pending)
        #expect(snapshot.attempts["job-0"]?.count == 1)
        #expect(
            try store.reading { txn, tables, _ in try txn.get(tables.meta, key: StoreKey.openingRun) } == nil)
    }

    /// The runner dies after the rows written ahead, before the opening's commit: the earlier
    /// run is still the current one and unchanged, the new one is nowhere, and the next large
    /// opening deletes what was written ahead.
    @Test func aRunnerThatDiesWhileWritingAheadLeavesTheStoreAsBefore() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/db"
        let earlier = RunRecord(id: "A", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1)
        let before: RunSnapshot
        do {
            let store = try LMDBQueueStore(directory: path, mapSize: 256 << 20)
            try await store.commitAsNewOwner([
                .putRun(earlier), .setCurrentRun("A"),
                .putJob(runID: "A", JobRecord(jobID: "a", pipeline: "p", state: .running, attempts: 1)),
            ])
            before = try #require(try await store.currentSnapshot())
            store.close()
        }
        do {
            let dying = try LMDBQueueStore(directory: path, mapSize: 256 << 20, failsAfterWritingAhead: true)
            await #expect(throws: StoreError.self) {
                try await dying.commitAsNewOwner(opening("B", superseding: earlier))
            }
            #expect(
                try storedRows(dying, of: "B") >= GroupCommitWriter.openingChunk, "rows were written ahead")
            dying.close()
        }
        let store = try LMDBQueueStore(directory: path, mapSize: 256 << 20)
        #expect(try await store.currentSnapshot() == before)
        #expect(try await store.runs().map(\.id) == ["A"])
        #expect(try await store.snapshot(runID: "B") == nil)

        try await store.commitAsNewOwner(opening("C", superseding: earlier))
        #expect(try storedRows(store, of: "B") == 0, "the dead runner's rows are gone")
        #expect(try await store.currentSnapshot()?.jobs.count == count)
        #expect(try await store.runs().map { "\($0.id) \($0.state)" } == ["A stopped", "C running"])
    }
}
