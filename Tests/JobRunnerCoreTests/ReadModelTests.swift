import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

/// The queries readers share (``ReadModel``), over the in-memory store: what a run's jobs wait
/// for, the runs list, periodic occurrences, logs.
@Suite struct ReadModelTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// A lock that says a runner works, with a pid.
    struct WorkingRunner: RunnerLock {
        final class Hold: RunnerLockHold, OperatorLockHold {
            let runnerWorks = true
            let runnerPID: Int32? = 77
        }
        func lockForRunner(whileWaiting: () -> Void) async throws(StoreError) -> any RunnerLockHold { Hold() }
        func lockForOperator(whileWaiting: () -> Void) async throws(StoreError) -> any OperatorLockHold {
            Hold()
        }
        func runnerWorks() async -> Bool { true }
        func runnerPID() async -> Int32? { 77 }
    }

    func reader(_ store: any QueueStore, lock: (any RunnerLock)? = nil, state: String = "/state") -> ReadModel
    {
        ReadModel(store: store, lock: lock, logs: LogLocation(stateDirectory: state))
    }

    func job(_ id: String, _ state: JobState, pipeline: String = "p", needs: [String] = []) -> JobRecord {
        JobRecord(jobID: id, pipeline: pipeline, needs: needs, state: state)
    }

    @Test func aRunViewSaysWhatEachWaitingJobWaitsFor() async throws {
        let store = InMemoryQueueStore()
        let run = RunRecord(
            id: "R", state: .running, startedAt: start, jobIDs: ["a", "b", "c", "d"], runnerPID: 1,
            pipelineLimits: ["p": 2, "q": 1])
        try await store.commitAsNewOwner([
            .putRun(run), .setCurrentRun("R"),
            .putJob(runID: "R", job("a", .running)),
            .putJob(runID: "R", job("b", .pending, needs: ["a"])),
            .putJob(runID: "R", job("c", .pending, pipeline: "q")),
            .putJob(runID: "R", job("d", .pending)),
            .putPipeline(PipelineRecord(name: "q", suspended: 1)),
        ])
        let working = try #require(
            try await reader(store, lock: WorkingRunner()).runView(runID: "R", all: false))
        var jobs: [String: RunView.Job] = [:]
        working.forEachJob { jobs[$0.record.jobID] = $0 }
        #expect(jobs["a"]?.state == .running && jobs["a"]?.waitingFor == nil)
        #expect(jobs["b"]?.state == .waiting && jobs["b"]?.waitingFor == .needs("a"))
        #expect(jobs["b"]?.reason == .waiting(.needs("a")))
        #expect(jobs["c"]?.waitingFor == .suspended)
        #expect(jobs["d"]?.waitingFor == .slot)
        #expect(working.runnerPID == 77 && !working.replaced)
        #expect(
            working.pipelines == [
                RunView.Pipeline(name: "p", maxConcurrent: 2, suspended: 0, running: 1),
                RunView.Pipeline(name: "q", maxConcurrent: 1, suspended: 1, running: 0),
            ])

        // With no runner at work, a job that only waits for a slot starts at the next `run`.
        let idle = try #require(try await reader(store).runView(runID: "R", all: false))
        var idleJobs: [String: RunView.Job] = [:]
        idle.forEachJob { idleJobs[$0.record.jobID] = $0 }
        #expect(idleJobs["d"]?.state == .pending && idleJobs["d"]?.waitingFor == nil)
        #expect(idleJobs["b"]?.waitingFor == .needs("a"), "a need is still a need")
        #expect(try await reader(store).runView(runID: "S", all: true) == nil)
    }

    @Test func aBigRunListsOnlyTheJobsThatDidNotSucceedUnlessAllAreAskedFor() async throws {
        let store = InMemoryQueueStore()
        let ids = (0...RunView.fullListLimit).map { "j\($0)" }
        var changes: [StoreChange] = [
            .putRun(RunRecord(id: "R", state: .failed, startedAt: start, jobIDs: ids, runnerPID: 1)),
            .setCurrentRun("R"),
        ]
        changes += ids.map { .putJob(runID: "R", job($0, $0 == "j0" ? .failed : .succeeded)) }
        try await store.commitAsNewOwner(changes)
        let some = try #require(try await reader(store).runView(runID: "R", all: false))
        var listed: [String] = []
        some.forEachJob { listed.append($0.record.jobID) }
        #expect(listed == ["j0"])
        #expect(some.unlisted == [.succeeded: RunView.fullListLimit])
        let every = try #require(try await reader(store).runView(runID: "R", all: true))
        var all = 0
        every.forEachJob { _ in all += 1 }
        #expect(all == ids.count && every.unlisted.isEmpty)
    }

    @Test func theRunsListIsNewestFirstWithEachRunsCounts() async throws {
        let store = InMemoryQueueStore()
        for (index, id) in ["old", "mid", "new"].enumerated() {
            try await store.commitAsNewOwner([
                .putRun(
                    RunRecord(
                        id: id, state: .succeeded, startedAt: start.addingTimeInterval(Double(index)),
                        jobIDs: ["a", "b"], runnerPID: 1)),
                .putJob(runID: id, job("a", .succeeded)),
                .putJob(runID: id, job("b", index == 2 ? .failed : .succeeded)),
            ])
        }
        let entries = try await reader(store).recentRuns(limit: 2)
        #expect(entries.map(\.run.id) == ["new", "mid"])
        #expect(entries.first?.counts == [.succeeded: 1, .failed: 1])
        #expect(entries.last?.counts == [.succeeded: 2])
    }

    @Test func missedOccurrencesRecordedTogetherAreListedNewestDateFirst() async throws {
        let store = InMemoryQueueStore()
        // A runner back after downtime records 30 missed dates at one moment (catchUp: none).
        for minute in 0..<30 {
            var run = RunRecord(
                id: "missed-\(100 + minute)", state: .missed, startedAt: start.addingTimeInterval(3600),
                finishedAt: start.addingTimeInterval(3600), jobIDs: ["tick"], runnerPID: 1)
            run.occurrenceOf = "tick"
            run.scheduledAt = start.addingTimeInterval(Double(minute) * 60)
            try await store.commitAsNewOwner([.putRun(run)])
        }
        let entries = try await reader(store).recentRuns(limit: 3, job: "tick")
        #expect(entries.map(\.run.id) == ["missed-129", "missed-128", "missed-127"])
    }

    @Test func aPeriodicJobsLatestOccurrenceIsTheLatestThatRan() async throws {
        let store = InMemoryQueueStore()
        func occurrence(_ id: String, _ state: RunState, at seconds: Double) -> StoreChange {
            var run = RunRecord(id: id, state: state, startedAt: start, jobIDs: ["tick"], runnerPID: 1)
            run.occurrenceOf = "tick"
            run.scheduledAt = start.addingTimeInterval(seconds)
            return .putRun(run)
        }
        #expect(try await reader(store).latestOccurrence(of: "tick") == nil)
        try await store.commitAsNewOwner([occurrence("o1", .skipped, at: 0)])
        let skipped = try #require(try await reader(store).latestOccurrence(of: "tick"))
        #expect(skipped.run.id == "o1" && !skipped.ran)
        try await store.commitAsNewOwner([
            occurrence("o2", .succeeded, at: 60), occurrence("o3", .missed, at: 120),
        ])
        let ran = try #require(try await reader(store).latestOccurrence(of: "tick"))
        #expect(ran.run.id == "o2" && ran.ran)
    }

    @Test func anAttemptsLogIsFoundWhereItsRecordSaysAndReadFromAnOffset() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("jobrunner-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        try FileManager.default.createDirectory(
            atPath: state + "/logs/R/a", withIntermediateDirectories: true)
        try Data("hello\nworld\n".utf8).write(to: URL(fileURLWithPath: state + "/logs/R/a/1.log"))
        let model = reader(InMemoryQueueStore(), state: state)
        let stored = AttemptRecord(jobID: "a", number: 1, startedAt: start, logPath: "logs/R/a/1.log")
        let unstored = AttemptRecord(jobID: "a", number: 1, startedAt: start)
        #expect(model.logPath(of: stored, runID: "R") == state + "/logs/R/a/1.log")
        #expect(model.logPath(of: unstored, runID: "R") == state + "/logs/R/a/1.log", "the layout's place")
        #expect(
            String(decoding: model.logContent(of: stored, runID: "R", from: 6), as: UTF8.self) == "world\n")
        let moved = AttemptRecord(jobID: "a", number: 1, startedAt: start, logPath: "/gone/logs/R/a/1.log")
        #expect(model.logPath(of: moved, runID: "R") == state + "/logs/R/a/1.log", "a moved state directory")
        #expect(
            model.logContent(of: AttemptRecord(jobID: "b", number: 1, startedAt: start), runID: "R").isEmpty)
    }

    @Test func thePipelinesAnOperatorMaySuspendAreTheRecentRunsAndTheSuspendedOnes() async throws {
        let store = InMemoryQueueStore()
        #expect(try await reader(store).knownPipelines().isEmpty)
        try await store.commitAsNewOwner([
            .putRun(
                RunRecord(
                    id: "R", state: .succeeded, startedAt: start, jobIDs: [], runnerPID: 1,
                    pipelineLimits: ["build": 1])),
            .putPipeline(PipelineRecord(name: "deploy", suspended: 1)),
            .putPipeline(PipelineRecord(name: "resumed", suspended: 0)),
        ])
        #expect(try await reader(store).knownPipelines() == ["build", "deploy"])
    }
}
