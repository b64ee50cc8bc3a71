import Foundation
import JobRunnerCore
import Testing

/// What every ``QueueStore`` must do, as cases a store's own test target runs against it: the
/// LMDB store's and the in-memory store's do, and a new store only has to pass them.
///
/// ```swift
/// @Test(arguments: StoreContract.cases)
/// func contract(_ check: StoreContract.Case) async throws {
///     try await check.run { InMemoryQueueStore() }
/// }
/// ```
public enum StoreContract {
    /// One rule of the contract, run against a store `makeStore` makes (once per case: each
    /// case starts from an empty store).
    public struct Case: Sendable, CustomTestStringConvertible {
        public let name: String
        let body: @Sendable (any QueueStore) async throws -> Void

        public var testDescription: String { name }

        /// Checks the rule against a new store.
        public func run(_ makeStore: () throws -> any QueueStore) async throws {
            try await body(try makeStore())
        }
    }

    /// Every case.
    public static let cases: [Case] = [
        Case(name: "the last write to a row in a batch wins", body: theLastWriteToARowInABatchWins),
        Case(name: "a new run's jobs are stored from one change", body: aNewRunsJobsAreStoredFromOneChange),
        Case(name: "stores and reads back every record kind", body: storesAndReadsBackEveryRecordKind),
        Case(name: "runs do not see each other's rows", body: runsDoNotSeeEachOthersRows),
        Case(name: "later writes replace earlier ones in submission order", body: laterWritesWinInOrder),
        Case(name: "deleting a run deletes its rows only", body: deletingARunDeletesItsRowsOnly),
        Case(
            name: "a resumable snapshot holds only the open attempts",
            body: aResumableSnapshotHoldsOpenAttempts),
        Case(name: "the narrow reads agree with the snapshot", body: theNarrowReadsAgreeWithTheSnapshot),
        Case(name: "a stale claim is refused and writes nothing", body: aStaleClaimIsRefusedAndWritesNothing),
        Case(name: "writes that belong to nobody need no claim", body: writesThatBelongToNobodyNeedNoClaim),
        Case(name: "commits are events numbered in order", body: commitsAreEventsNumberedInOrder),
        Case(
            name: "a reader resumes after the last event it saw", body: aReaderResumesAfterTheLastEventItSaw),
        Case(name: "a follower is woken by the next commit", body: aFollowerIsWokenByTheNextCommit),
        Case(name: "the oldest events go beyond those kept", body: theOldestEventsGoBeyondThoseKept),
        Case(
            name: "reported events and answers are kept among the commit's events",
            body: reportedEventsAndAnswersAreKeptAmongTheEvents),
    ]

    static let start = Date(timeIntervalSince1970: 1_800_000_000.25)

    /// Within one batch the last write to a row is the one that lasts (the LMDB store encodes
    /// only that one), deletes included.
    static func theLastWriteToARowInABatchWins(_ store: any QueueStore) async throws {
        let run = RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1)
        func request(_ id: UInt64) -> OperatorRequest {
            OperatorRequest(id: id, kind: .retry, jobID: "a", requestedAt: start)
        }
        try await store.commitAsNewOwner([
            .putRun(run), .setCurrentRun("R"),
            .putJob(runID: "R", JobRecord(jobID: "a", pipeline: "p", state: .running, attempts: 1)),
            .putAttempt(runID: "R", AttemptRecord(jobID: "a", number: 1, startedAt: start)),
            .putJob(runID: "R", JobRecord(jobID: "a", pipeline: "p", state: .succeeded, attempts: 1)),
            .putAttempt(
                runID: "R", AttemptRecord(jobID: "a", number: 1, outcome: .succeeded, startedAt: start)),
            .putRequest(runID: "R", request(1)), .deleteRequest(runID: "R", id: 1),
            .deleteRequest(runID: "R", id: 2), .putRequest(runID: "R", request(2)),
        ])
        let snapshot = try #require(try await store.currentSnapshot())
        #expect(snapshot.jobs["a"]?.state == .succeeded)
        #expect(snapshot.attempts["a"]?.map(\.outcome) == [.succeeded])
        #expect(try await store.requests(runID: "R").map(\.id) == [2])
    }

    /// A new run's jobs are stored as one change that makes their records as they are written;
    /// a later write to one of them in the same batch (a job that starts at once) still wins.
    static func aNewRunsJobsAreStoredFromOneChange(_ store: any QueueStore) async throws {
        let plan = RunPlan(
            jobs: [
                RunPlan.Job(id: "a", retry: RetryPolicy(attempts: 3)),
                RunPlan.Job(id: "b", needs: ["a"], allowFailure: true),
                RunPlan.Job(id: "off", enabled: false),
            ], pipelines: [])
        let run = RunRecord(
            id: "R", state: .running, startedAt: start, jobIDs: ["a", "b", "off"], runnerPID: 1)
        let new = NewJobRecords(runID: "R", plan: plan, now: start)
        try await store.commitAsNewOwner([
            .putRun(run), .setCurrentRun("R"), .putNewJobs(new),
            .putJob(runID: "R", JobRecord(jobID: "a", pipeline: "default", state: .running, attempts: 1)),
        ])
        let snapshot = try #require(try await store.currentSnapshot())
        #expect(snapshot.jobs["a"]?.state == .running, "the later write wins")
        #expect(snapshot.jobs["b"] == new[1])
        #expect(snapshot.jobs["b"]?.needs == ["a"])
        #expect(snapshot.jobs["b"]?.allowFailure == true)
        #expect(snapshot.jobs["off"]?.state == .skipped)
        #expect(snapshot.jobs["off"]?.reason == .ended(.disabled))
        #expect(snapshot.jobs.count == 3)
        #expect(new.events.map(\.kind) == [.queued, .queued, .skipped])
    }

    static func storesAndReadsBackEveryRecordKind(_ store: any QueueStore) async throws {
        #expect(try await store.currentRunID() == nil)
        #expect(try await store.currentSnapshot() == nil)

        let run = RunRecord(
            id: "R1", state: .running, startedAt: start, jobIDs: ["a", "b"], runnerPID: 7,
            pipelineLimits: ["p": 2])
        let job = JobRecord(
            jobID: "a", pipeline: "p", needs: ["b"], maxAttempts: 3, state: .waiting,
            reason: .waiting(.backoff),
            attempts: 2, nextAttemptAt: start.addingTimeInterval(5))
        try await store.commitAsNewOwner([
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
        #expect(try await store.currentRunID() == "R1")
        let snapshot = try #require(try await store.snapshot(runID: "R1"))
        #expect(snapshot.run == run)
        #expect(snapshot.jobs["a"] == job)
        #expect(snapshot.jobs.count == 2)
        #expect(snapshot.attempts["a"]?.map(\.number) == [1, 2, 10], "attempts read back in numeric order")
        #expect(snapshot.attempts["a"]?.first?.pid == 99)
        #expect(snapshot.outputs["a"] == ["k": "v", "empty": ""])
        #expect(try await store.pipelines()["p"]?.suspended == 2)
        #expect(
            try await store.snapshot(runID: "R") == nil,
            "a run id that is a prefix of another is not that run")
    }

    static func runsDoNotSeeEachOthersRows(_ store: any QueueStore) async throws {
        for id in ["R1", "R10", "R2"] {
            try await store.commitAsNewOwner([
                .putRun(RunRecord(id: id, state: .succeeded, startedAt: start, jobIDs: ["x"], runnerPID: 1)),
                .putJob(runID: id, JobRecord(jobID: "x-\(id)", pipeline: "default")),
            ])
        }
        #expect(try await store.snapshot(runID: "R1")?.jobs.keys.sorted() == ["x-R1"])
        #expect(try await store.runs().map(\.id) == ["R1", "R10", "R2"])
    }

    static func laterWritesWinInOrder(_ store: any QueueStore) async throws {
        let run = RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1)
        let claim = try await store.claim(owner: "test")
        try await store.commit([.putRun(run), .setCurrentRun("R")], under: claim)
        // Many submissions at once, as the runner makes them while an fsync is in flight.
        let order = Completions()
        await withTaskGroup(of: Void.self) { group in
            for attempt in 1...50 {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        store.submit(
                            [
                                .putJob(
                                    runID: "R", JobRecord(jobID: "a", pipeline: "default", attempts: attempt))
                            ],
                            under: claim
                        ) { _ in
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
            try await store.snapshot(runID: "R")?.jobs["a"]?.attempts == completions.last,
            "the last completed submission wins")
    }

    /// Pruning deletes a run with every row of it, and nothing of another run, even one whose id
    /// starts with the pruned one's.
    static func deletingARunDeletesItsRowsOnly(_ store: any QueueStore) async throws {
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
        try await store.commitAsNewOwner(changes)
        try await store.commitAsNewOwner([.deleteRun("R")])
        #expect(try await store.snapshot(runID: "R") == nil)
        #expect(try await store.requests(runID: "R").isEmpty)
        #expect(try await store.runs().map(\.id) == ["R2"])
        let kept = try #require(try await store.snapshot(runID: "R2"))
        #expect(kept.jobs.count == 1 && kept.attempts["a"]?.count == 1 && kept.outputs["a"] == ["k": "v"])
        #expect(try await store.requests(runID: "R2").count == 1)
        // Written again after a prune, a run starts from nothing.
        try await store.commitAsNewOwner([
            .putRun(RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1))
        ])
        #expect(try await store.snapshot(runID: "R")?.jobs.isEmpty == true)
    }

    /// Resuming reads only the attempts left open; each is as `snapshot` reads it.
    static func aResumableSnapshotHoldsOpenAttempts(_ store: any QueueStore) async throws {
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
        try await store.commitAsNewOwner(changes)
        let whole = try #require(try await store.snapshot(runID: "R"))
        let resumable = try #require(try await store.resumableSnapshot(runID: "R"))
        #expect(whole.attempts.values.map(\.count).reduce(0, +) == 4)
        let openOfA = try #require(whole.attempts["a"]?.last)
        #expect(resumable.attempts == ["a": [openOfA], "c": whole.attempts["c"] ?? []])
        #expect(
            resumable.run == whole.run && resumable.jobs == whole.jobs && resumable.outputs == whole.outputs)
        #expect(try await store.resumableSnapshot(runID: "other") == nil)
    }

    /// A run's record alone, its overview, and outputs read by job, as the snapshot has them.
    static func theNarrowReadsAgreeWithTheSnapshot(_ store: any QueueStore) async throws {
        let run = RunRecord(
            id: "R", state: .running, startedAt: start, jobIDs: ["a", "b", "c"], runnerPID: 1)
        try await store.commitAsNewOwner([
            .putRun(run),
            .putJob(runID: "R", JobRecord(jobID: "a", pipeline: "p", state: .succeeded, attempts: 1)),
            .putJob(runID: "R", JobRecord(jobID: "b", pipeline: "p", state: .failed, attempts: 2)),
            .putJob(runID: "R", JobRecord(jobID: "c", pipeline: "p", state: .pending)),
            .putOutputs(runID: "R", jobID: "a", occurrence: "", ["k": "a"]),
            .putOutputs(runID: "R", jobID: "b", occurrence: "", ["k": "b"]),
        ])
        let snapshot = try #require(try await store.snapshot(runID: "R"))
        #expect(try await store.run(id: "R") == run)
        #expect(try await store.run(id: "S") == nil)
        let overview = try #require(
            try await store.overview(
                runID: "R", listing: { state, _ in state != .succeeded }, withOutputs: true))
        #expect(overview.run == run)
        #expect(overview.states == snapshot.jobs.mapValues(\.state))
        #expect(overview.jobs.keys.sorted() == ["b", "c"], "only the listed jobs are read whole")
        #expect(overview.jobs["b"] == snapshot.jobs["b"])
        #expect(overview.outputs == ["b": ["k": "b"]])
        #expect(try await store.overview(runID: "S", listing: { _, _ in true }, withOutputs: false) == nil)
        let a = JobInRun(runID: "R", jobID: "a")
        let c = JobInRun(runID: "R", jobID: "c")
        let gone = JobInRun(runID: "S", jobID: "a")
        #expect(try await store.outputs(of: [a, c, gone]) == [a: ["k": "a"]])
    }
}

/// Completion order of submissions.
private final class Completions: Sendable {
    private let storage = Locked<[Int]>([])
    func append(_ value: Int) { storage.withLock { $0.append(value) } }
    var values: [Int] { storage.withLock { $0 } }
}

extension QueueStore {
    /// Commits `changes` under a claim taken for them: how a test stores what a runner would
    /// have. Any claim taken before is stale from then on.
    public func commitAsNewOwner(_ changes: [StoreChange]) async throws(StoreError) {
        try await commit(changes, under: try await claim(owner: "test"))
    }
}
