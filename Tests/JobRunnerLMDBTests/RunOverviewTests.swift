import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

@testable import JobRunnerLMDB

/// `status` reads every job's state and whole records only for the jobs it lists.
@Suite struct RunOverviewTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func job(_ id: String, _ state: JobState) -> JobRecord {
        JobRecord(jobID: id, pipeline: "p", state: state)
    }

    func seed(_ store: LMDBQueueStore) async throws {
        try await store.commitAsNewOwner([
            .putRun(
                RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a", "b", "c"], runnerPID: 1)),
            .putJob(runID: "R", job("a", .running)), .putJob(runID: "R", job("b", .pending)),
            .putJob(runID: "R", job("c", .pending)),
            .putOutputs(runID: "R", jobID: "a", occurrence: "", ["k": "v"]),
        ])
        try await store.commitAsNewOwner([
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
            try await store.overview(
                runID: "R", listing: { state, _ in state != .succeeded }, withOutputs: true))
        #expect(overview.states == ["a": .succeeded, "b": .failed, "c": .pending])
        #expect(Set(overview.jobs.keys) == ["b", "c"])
        #expect(overview.jobs["b"]?.state == .failed)
        #expect(overview.outputs.isEmpty, "outputs only of listed jobs")
        let all = try #require(
            try await store.overview(runID: "R", listing: { _, _ in true }, withOutputs: true))
        #expect(all.outputs == ["a": ["k": "v"]])
        #expect(try await store.overview(runID: "nope", listing: { _, _ in true }) == nil)
    }
}
