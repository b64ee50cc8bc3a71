import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerLMDB

/// `status` reads every job's state from the `jobStates` index and whole records only for the
/// jobs it lists.
@Suite struct RunOverviewTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func job(_ id: String, _ state: JobState) -> JobRecord {
        JobRecord(jobID: id, pipeline: "p", state: state)
    }

    func seed(_ store: LMDBQueueStore) async throws {
        try await store.commit([
            .putRun(
                RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a", "b", "c"], runnerPID: 1)),
            .putJob(runID: "R", job("a", .running)), .putJob(runID: "R", job("b", .pending)),
            .putJob(runID: "R", job("c", .pending)),
            .putOutputs(runID: "R", jobID: "a", occurrence: "", ["k": "v"]),
        ])
        try await store.commit([
            .putJob(runID: "R", job("a", .succeeded)), .putJob(runID: "R", job("b", .failed)),
        ])
    }

    @Test func readsEveryStateAndOnlyTheListedRecords() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        defer { store.close() }
        try await seed(store)
        let overview = try #require(
            try store.overview(runID: "R", listing: { state, _ in state != .succeeded }, withOutputs: true))
        #expect(overview.states == ["a": .succeeded, "b": .failed, "c": .pending])
        #expect(Set(overview.jobs.keys) == ["b", "c"])
        #expect(overview.jobs["b"]?.state == .failed)
        #expect(overview.outputs.isEmpty, "outputs only of listed jobs")
        let all = try #require(try store.overview(runID: "R", listing: { _, _ in true }, withOutputs: true))
        #expect(all.outputs == ["a": ["k": "v"]])
        #expect(try store.overview(runID: "nope", listing: { _, _ in true }) == nil)
    }

    @Test func aPrunedRunLeavesNoStates() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        defer { store.close() }
        try await seed(store)
        try await store.commit([.deleteRun("R")])
        let environment = try Environment(directory: directory, mapSize: 64 << 20)
        let table = environment.tables.jobStates
        let left = try environment.read { txn throws(LMDBError) in
            var count = 0
            try txn.scan(table, prefix: []) { _, _ in count += 1 }
            return count
        }
        #expect(left == 0)
    }

    /// A database of schema 1 has no `jobStates`: opening it fills the index from the records.
    @Test func aSchemaOneDatabaseIsBroughtUpToDateWhenOpened() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
            try await seed(store)
            store.close()
        }
        // Make it what schema 1 wrote: no index.
        do {
            let environment = try Environment(directory: directory, mapSize: 64 << 20)
            let tables = environment.tables
            try environment.write { txn throws(LMDBError) in
                var keys: [[UInt8]] = []
                try txn.scan(tables.jobStates, prefix: []) { key, _ in keys.append(key) }
                for key in keys { try txn.delete(tables.jobStates, key: key) }
            }
        }
        try LMDBTestSupport.setSchemaVersion(1, in: directory)
        let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        defer { store.close() }
        let overview = try #require(try store.overview(runID: "R", listing: { _, _ in false }))
        #expect(overview.states == ["a": .succeeded, "b": .failed, "c": .pending])
        let environment = try Environment(directory: directory, mapSize: 64 << 20)
        let meta = environment.tables.meta
        let version = try environment.read { txn throws(LMDBError) in
            try txn.get(meta, key: StoreKey.schemaVersion)
        }
        #expect(version.map { String(decoding: $0, as: UTF8.self) } == String(LMDBQueueStore.schemaVersion))
    }
}
