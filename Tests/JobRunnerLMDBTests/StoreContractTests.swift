import Foundation
import JobRunnerCore
import JobRunnerLMDB
import Testing

/// A fresh temporary directory, removed by the caller.
func temporaryDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
        "jobrunner-lmdb-\(UUID().uuidString)"
    ).path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// The two stores the contract is checked against.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
    case memory, lmdb
    var testDescription: String { rawValue }

    func make(_ directory: String) throws -> any QueueStore {
        switch self {
        case .memory: return InMemoryQueueStore()
        case .lmdb: return try LMDBQueueStore(directory: directory + "/db", mapSize: 64 << 20)
        }
    }
}

/// One contract, run against the in-memory store and the LMDB store alike.
@Suite struct StoreContractTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000.25)

    /// Within one batch the last write to a row is the one that lasts (the LMDB store encodes
    /// only that one), deletes included.
    @Test(arguments: StoreKind.allCases)
    func theLastWriteToARowInABatchWins(kind: StoreKind) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try kind.make(directory)
        let run = RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1)
        func request(_ id: UInt64) -> OperatorRequest {
            OperatorRequest(id: id, kind: .retry, jobID: "a", requestedAt: start)
        }
        try await store.commit([
            .putRun(run), .setCurrentRun("R"),
            .putJob(runID: "R", JobRecord(jobID: "a", pipeline: "p", state: .running, attempts: 1)),
            .putAttempt(runID: "R", AttemptRecord(jobID: "a", number: 1, startedAt: start)),
            .putJob(runID: "R", JobRecord(jobID: "a", pipeline: "p", state: .succeeded, attempts: 1)),
            .putAttempt(
                runID: "R", AttemptRecord(jobID: "a", number: 1, outcome: .succeeded, startedAt: start)),
            .putRequest(runID: "R", request(1)), .deleteRequest(runID: "R", id: 1),
            .deleteRequest(runID: "R", id: 2), .putRequest(runID: "R", request(2)),
        ])
        let snapshot = try #require(try store.currentSnapshot())
        #expect(snapshot.jobs["a"]?.state == .succeeded)
        #expect(snapshot.attempts["a"]?.map(\.outcome) == [.succeeded])
        #expect(try store.requests(runID: "R").map(\.id) == [2])
    }

    /// A new run's jobs are stored as one change that makes their records as they are written;
    /// a later write to one of them in the same batch (a job that starts at once) still wins.
    @Test(arguments: StoreKind.allCases)
    func aNewRunsJobsAreStoredFromOneChange(kind: StoreKind) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try kind.make(directory)
        let plan = RunPlan(
            jobs: [
                RunPlan.Job(id: "a", retry: RetryPolicy(attempts: 3)),
                RunPlan.Job(id: "b", needs: ["a"], allowFailure: true),
                RunPlan.Job(id: "off", enabled: false),
            ], pipelines: [])
        let run = RunRecord(
            id: "R", state: .running, startedAt: start, jobIDs: ["a", "b", "off"], runnerPID: 1)
        let new = NewJobRecords(runID: "R", plan: plan, now: start)
        try await store.commit([
            .putRun(run), .setCurrentRun("R"), .putNewJobs(new),
            .putJob(runID: "R", JobRecord(jobID: "a", pipeline: "default", state: .running, attempts: 1)),
        ])
        let snapshot = try #require(try store.currentSnapshot())
        #expect(snapshot.jobs["a"]?.state == .running, "the later write wins")
        #expect(snapshot.jobs["b"] == new[1])
        #expect(snapshot.jobs["b"]?.needs == ["a"])
        #expect(snapshot.jobs["b"]?.allowFailure == true)
        #expect(snapshot.jobs["off"]?.state == .skipped)
        #expect(snapshot.jobs["off"]?.reason == .ended(.disabled))
        #expect(snapshot.jobs.count == 3)
        #expect(new.events.map(\.kind) == [.queued, .queued, .skipped])
    }

    @Test(arguments: StoreKind.allCases)
    func storesAndReadsBackEveryRecordKind(kind: StoreKind) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try kind.make(directory)
        #expect(try store.currentRunID() == nil)
        #expect(try store.currentSnapshot() == nil)

        let run = RunRecord(
            id: "R1", state: .running, startedAt: start, jobIDs: ["a", "b"], runnerPID: 7,
            pipelineLimits: ["p": 2])
        let job = JobRecord(
            jobID: "a", pipeline: "p", needs: ["b"], maxAttempts: 3, state: .waiting,
            reason: .waiting(.backoff),
            attempts: 2, nextAttemptAt: start.addingTimeInterval(5))
        try await store.commit([
            .putRun(run), .setCurrentRun("R1"), .putJob(runID: "R1", job),
            .putJob(runID: "R1", JobRecord(jobID: "b", pipeline: "default")),
            .putAttempt(
                runID: "R1",
                AttemptRecord(jobID: "a", number: 10, outcome: .failed, startedAt: start, exitCode: 1)),
            .putAttempt(
                runID: "R1", AttemptRecord(jobID: "a", number: 2, outcome: .timeout, startedAt: start)),
            .putAttempt(
                runID: "R1",
                AttemptRecord(jobID: "a", number: 1, startedAt: start, pid: 99, pidStartTime: 12345)),
            .putOutputs(runID: "R1", jobID: "a", occurrence: "", ["k": "v", "empty": ""]),
            .putPipeline(PipelineRecord(name: "p", suspended: 2)),
        ])
        #expect(try store.currentRunID() == "R1")
        let snapshot = try #require(try store.snapshot(runID: "R1"))
        #expect(snapshot.run == run)
        #expect(snapshot.jobs["a"] == job)
        #expect(snapshot.jobs.count == 2)
        #expect(snapshot.attempts["a"]?.map(\.number) == [1, 2, 10], "attempts read back in numeric order")
        #expect(snapshot.attempts["a"]?.first?.pid == 99)
        #expect(snapshot.outputs["a"] == ["k": "v", "empty": ""])
        #expect(try store.pipelines()["p"]?.suspended == 2)
        #expect(try store.snapshot(runID: "R") == nil, "a run id that is a prefix of another is not that run")
    }

    @Test(arguments: StoreKind.allCases)
    func runsDoNotSeeEachOthersRows(kind: StoreKind) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try kind.make(directory)
        for id in ["R1", "R10", "R2"] {
            try await store.commit([
                .putRun(RunRecord(id: id, state: .succeeded, startedAt: start, jobIDs: ["x"], runnerPID: 1)),
                .putJob(runID: id, JobRecord(jobID: "x-\(id)", pipeline: "default")),
            ])
        }
        #expect(try store.snapshot(runID: "R1")?.jobs.keys.sorted() == ["x-R1"])
        #expect(try store.runs().map(\.id) == ["R1", "R10", "R2"])
    }

    @Test(arguments: StoreKind.allCases)
    func laterWritesReplaceEarlierOnesInSubmissionOrder(kind: StoreKind) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try kind.make(directory)
        let run = RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1)
        try await store.commit([.putRun(run), .setCurrentRun("R")])
        // Many submissions at once, as the runner makes them while an fsync is in flight.
        let order = Order()
        await withTaskGroup(of: Void.self) { group in
            for attempt in 1...50 {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        store.submit([
                            .putJob(runID: "R", JobRecord(jobID: "a", pipeline: "default", attempts: attempt))
                        ]) { _ in
                            order.append(attempt)
                            continuation.resume()
                        }
                    }
                }
            }
        }
        let completions = order.values
        #expect(completions.count == 50)
        #expect(
            try store.snapshot(runID: "R")?.jobs["a"]?.attempts == completions.last,
            "the last completed submission wins")
    }

    /// Pruning deletes a run with every row of it, and nothing of another run, even one whose id
    /// starts with the pruned one's.
    @Test(arguments: StoreKind.allCases)
    func deletingARunDeletesItsRowsOnly(kind: StoreKind) async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000.25)
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try kind.make(directory)
        var changes: [StoreChange] = []
        for id in ["R", "R2"] {
            changes += [
                .putRun(RunRecord(id: id, state: .succeeded, startedAt: start, jobIDs: ["a"], runnerPID: 1)),
                .putJob(runID: id, JobRecord(jobID: "a", pipeline: "p", state: .succeeded, attempts: 1)),
                .putAttempt(
                    runID: id, AttemptRecord(jobID: "a", number: 1, outcome: .succeeded, startedAt: start)),
                .putOutputs(runID: id, jobID: "a", occurrence: "", ["k": "v"]),
                .putRequest(runID: id, OperatorRequest(id: 1, kind: .retry, jobID: "a", requestedAt: start)),
            ]
        }
        try await store.commit(changes)
        try await store.commit([.deleteRun("R")])
        #expect(try store.snapshot(runID: "R") == nil)
        #expect(try store.requests(runID: "R").isEmpty)
        #expect(try store.runs().map(\.id) == ["R2"])
        let kept = try #require(try store.snapshot(runID: "R2"))
        #expect(kept.jobs.count == 1 && kept.attempts["a"]?.count == 1 && kept.outputs["a"] == ["k": "v"])
        #expect(try store.requests(runID: "R2").count == 1)
        // Written again after a prune, a run starts from nothing.
        try await store.commit([
            .putRun(RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1))
        ])
        #expect(try store.snapshot(runID: "R")?.jobs.isEmpty == true)
    }
}

/// Completion order of submissions.
final class Order: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var storage: [Int] = []
    func append(_ value: Int) { lock.withLock { storage.append(value) } }
    var values: [Int] { lock.withLock { storage } }
}

extension StoreContractTests {
    /// Resuming reads only the attempts left open; each is as `snapshot` reads it.
    @Test(arguments: StoreKind.allCases)
    func aResumableSnapshotHoldsOnlyTheOpenAttempts(kind: StoreKind) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try kind.make(directory)
        let run = RunRecord(
            id: "R", state: .running, startedAt: start, jobIDs: ["a", "b", "c"], runnerPID: 1)
        var changes: [StoreChange] = [.putRun(run), .setCurrentRun("R")]
        for (job, outcomes) in [("a", [AttemptOutcome.failed, nil]), ("b", [.succeeded]), ("c", [nil])] {
            changes.append(
                .putJob(runID: "R", JobRecord(jobID: job, pipeline: "p", state: .running, attempts: 1)))
            for (index, outcome) in outcomes.enumerated() {
                let attempt = AttemptRecord(
                    jobID: job, number: index + 1, outcome: outcome, startedAt: start, pid: 42, logPath: "l")
                changes.append(.putAttempt(runID: "R", attempt))
            }
        }
        try await store.commit(changes)
        let whole = try #require(try store.snapshot(runID: "R"))
        let resumable = try #require(try store.resumableSnapshot(runID: "R"))
        #expect(whole.attempts.values.map(\.count).reduce(0, +) == 4)
        let openOfA = try #require(whole.attempts["a"]?.last)
        #expect(resumable.attempts == ["a": [openOfA], "c": whole.attempts["c"] ?? []])
        #expect(
            resumable.run == whole.run && resumable.jobs == whole.jobs && resumable.outputs == whole.outputs)
        #expect(try store.resumableSnapshot(runID: "other") == nil)
    }
}
