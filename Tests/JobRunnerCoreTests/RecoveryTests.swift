import Foundation
import JobRunnerCore
import JobRunnerTesting
import Logging
import Testing

/// Records which orphans the runner asked to end.
final class RecordingTerminator: OrphanTerminator {
    private let ended = Locked<[Orphan]>([])
    private let endedSatisfies = Locked<[SatisfyProcess]>([])
    var orphans: [Orphan] { ended.withLock { $0 } }
    var satisfies: [SatisfyProcess] { endedSatisfies.withLock { $0 } }
    func terminate(_ orphan: Orphan) async { ended.withLock { $0.append(orphan) } }
    func terminate(_ satisfy: SatisfyProcess) async { endedSatisfies.withLock { $0.append(satisfy) } }
    func startTime(of pid: Int32) -> UInt64? { 99 }
}

@Suite struct RecoveryTests {
    /// A store as a runner that died mid-run leaves it: `done` succeeded, `busy` running.
    func crashedStore(crashedInARow: Int = 0, attempts: Int = 1) async throws -> (InMemoryQueueStore, String)
    {
        let store = InMemoryQueueStore()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let run = RunRecord(
            id: "R1", state: .running, startedAt: start, jobIDs: ["after", "busy", "done"], runnerPID: 4242)
        var busy = JobRecord(
            jobID: "busy", pipeline: "default", state: .running, attempts: 1, crashedInARow: crashedInARow,
            startedAt: start)
        busy.attempts = attempts
        try await store.commitAsNewOwner([
            .putRun(run), .setCurrentRun("R1"),
            .putJob(
                runID: "R1", JobRecord(jobID: "done", pipeline: "default", state: .succeeded, attempts: 1)),
            .putJob(runID: "R1", busy),
            .putJob(runID: "R1", JobRecord(jobID: "after", pipeline: "default", needs: ["busy"])),
            .putAttempt(
                runID: "R1",
                AttemptRecord(jobID: "busy", number: attempts, startedAt: start, pid: 31337, pidStartTime: 99)
            ),
        ])
        return (store, "R1")
    }

    let jobs = [
        job("done"), job("busy", retry: RetryPolicy(attempts: 5, backoff: .none)),
        job("after", needs: ["busy"]),
    ]

    @Test func resumesADeadRunnersRunWithoutRerunningFinishedJobs() async throws {
        let (store, runID) = try await crashedStore()
        let harness = Harness(store: store)
        let terminator = RecordingTerminator()
        let runner = Runner(
            workload: Workload(jobs: jobs, pipelines: []), store: store, handler: harness.handler,
            clock: harness.clock,
            observer: harness.observer, orphans: terminator,
            options: RunnerOptions(logDirectory: "/tmp/jobrunner-tests", runnerPID: 2),
            logger: .init(label: "t"), randomSeed: 1)
        let summary = try await runner.run()
        #expect(summary.resumed)
        #expect(summary.runID == runID)
        #expect(summary.state == .succeeded)
        #expect(
            terminator.orphans == [Orphan(runID: "R1", jobID: "busy", attempt: 1, pid: 31337, startTime: 99)],
            "the dead runner's attempt process group is ended")
        #expect(!harness.handler.startedJobs.contains("done"))
        #expect(harness.handler.calls.map { "\($0.job)#\($0.attempt)" } == ["busy#2", "after#1"])
        let attempts = try #require(try await store.currentSnapshot()?.attempts["busy"])
        #expect(attempts.map(\.outcome) == [.interrupted, .succeeded])
        #expect(harness.observer.events.first?.kind == .interrupted)
    }

    /// SPEC 5.9: a resumed run says so on its first line. The observers hear which run was
    /// opened, and how many of its jobs were final already, before any event of it.
    @Test func theObserversAreToldOfTheResumedRunBeforeItsFirstEvent() async throws {
        let (store, runID) = try await crashedStore()
        let harness = Harness(store: store)
        let summary = try await harness.run(jobs)
        #expect(summary.resumed)
        let opened = harness.observer.openedRuns
        #expect(opened.map(\.runID) == [runID])
        #expect(opened.first?.resumed == true)
        #expect(opened.first?.finalJobs == 1, "`done` was final before the crash")
        #expect(opened.first?.totalJobs == 3)

        let fresh = Harness()
        _ = try await fresh.run(jobs)
        #expect(fresh.observer.openedRuns.map(\.resumed) == [false])
        #expect(fresh.observer.openedRuns.first?.finalJobs == 0)
    }

    @Test func anAttemptInterruptedByADyingRunnerDoesNotCount() async throws {
        let (store, _) = try await crashedStore()
        let harness = Harness(store: store)
        let summary = try await harness.run([job("done"), job("busy"), job("after", needs: ["busy"])])
        #expect(summary.state == .succeeded, "retry.attempts 1 is not used up: the runner died, not the job")
        let jobs = try #require(try await store.currentSnapshot()).jobs
        #expect(jobs["busy"]?.state == .succeeded)
        #expect(jobs["busy"]?.countedAttempts == 1)
        #expect(jobs["after"]?.state == .succeeded)
    }

    @Test func thirdCrashInARowFailsAnInProcessPluginJob() async throws {
        let (store, _) = try await crashedStore(crashedInARow: 2, attempts: 3)
        let harness = Harness(store: store)
        var busy = job("busy", retry: RetryPolicy(attempts: 5, backoff: .none))
        busy.handler = .plugin(plugin: "testkit", handler: "crash")
        let summary = try await harness.run([job("done"), busy, job("after", needs: ["busy"])])
        #expect(summary.state == .failed)
        let record = try #require(try await store.currentSnapshot()?.jobs["busy"])
        #expect(record.state == .failed)
        #expect(record.reason == .ended(.crashedTheRunner))
        #expect(!harness.handler.startedJobs.contains("busy"))
    }

    @Test func aRunOfOtherJobsIsNotResumed() async throws {
        let (store, runID) = try await crashedStore()
        let harness = Harness(store: store)
        let summary = try await harness.run([job("something-else")])
        #expect(summary.runID != runID)
        #expect(try await store.snapshot(runID: runID)?.run.state == .stopped)
        #expect(try await store.snapshot(runID: runID)?.attempts["busy"]?.first?.outcome == .interrupted)
    }

    @Test func theSatisfyADeadRunnerLeftIsEndedBeforeTheRunResumes() async throws {
        let (store, runID) = try await crashedStore()
        let logs = FileManager.default.temporaryDirectory.appendingPathComponent("satisfy-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: logs) }
        let record = LogLayout.satisfyProcess(in: logs, runID: runID, constraint: "token")
        try FileManager.default.createDirectory(
            atPath: LogLayout.constraintFolder(in: logs, runID: runID), withIntermediateDirectories: true)
        try SatisfyProcess(pid: 31338, startTime: 7).recorded.write(
            toFile: record, atomically: true, encoding: .utf8)
        let harness = Harness(store: store)
        let terminator = RecordingTerminator()
        let runner = Runner(
            workload: Workload(jobs: jobs, pipelines: []), store: store, handler: harness.handler,
            clock: harness.clock, observer: harness.observer, orphans: terminator,
            options: RunnerOptions(logDirectory: logs, runnerPID: 2), logger: .init(label: "t"), randomSeed: 1
        )
        _ = try await runner.run()
        #expect(terminator.satisfies == [SatisfyProcess(pid: 31338, startTime: 7)])
        #expect(!FileManager.default.fileExists(atPath: record), "ended once, not at every start")
    }

    @Test func aSatisfyRecordReadsBackAsWritten() {
        for process in [SatisfyProcess(pid: 42, startTime: 123_456), SatisfyProcess(pid: 42, startTime: nil)]
        {
            #expect(SatisfyProcess(recorded: process.recorded) == process)
        }
        #expect(SatisfyProcess(recorded: "42 -\n456\n") == SatisfyProcess(pid: 42, startTime: nil))
        #expect(SatisfyProcess(recorded: "1 5") == nil, "never PID 1's group")
        #expect(SatisfyProcess(recorded: "garbage") == nil)
    }
}
