import Foundation
import JobRunnerCore
import JobRunnerTesting
import Logging
import Synchronization
import Testing

@Suite struct OperatorRequestTests {
    let killed = AttemptResult(.signalled(15))

    func runner(
        _ harness: Harness, _ jobs: [JobDefinition], pipelines: [PipelineDefinition] = [],
        orphans: (any OrphanTerminator)?
    )
        -> Runner
    {
        Runner(
            workload: Workload(jobs: jobs, pipelines: pipelines), store: harness.store,
            handler: harness.handler,
            clock: harness.clock, observer: harness.observer, orphans: orphans,
            options: RunnerOptions(logDirectory: "/tmp/jobrunner-tests", runnerPID: 1),
            logger: .init(label: "t"),
            randomSeed: 3)
    }

    func request(_ kind: OperatorRequest.Kind, _ job: String, id: UInt64 = 1) -> OperatorRequest {
        OperatorRequest(
            id: id, kind: kind, jobID: job, requestedAt: Date(timeIntervalSince1970: 1_800_000_000))
    }

    @Test func cancelEndsTheRunningAttemptAndBlocksDependents() async throws {
        let handler = ScriptedHandler(scripts: ["long": [killed]], hold: ["long"])
        let harness = Harness(handler: handler)
        let runner = runner(harness, [job("long"), job("after", needs: ["long"]), job("free")], orphans: nil)
        let task = Task { try await runner.run() }
        await handler.waitForStarts(2)
        let runID = try #require(try await harness.store.currentRunID())
        try await harness.store.post([request(.cancel, "long")], runID: runID)
        runner.poke()
        let summary = try await task.value
        #expect(summary.state == .failed)
        #expect(handler.calls.filter { $0.job == "long" }.count == 1, "the attempt was ended, not retried")
        let snapshot = try #require(try await harness.store.currentSnapshot())
        #expect(snapshot.jobs["long"]?.state == .cancelled)
        #expect(snapshot.jobs["long"]?.reason?.words == "cancelled by operator")
        #expect(snapshot.jobs["after"]?.state == .blocked)
        #expect(snapshot.attempts["long"]?.last?.outcome == .interrupted)
        #expect(try await harness.store.requests(runID: runID).isEmpty, "an applied request is deleted")
        #expect(harness.observer.events.contains { $0.kind == .cancelled && $0.job == "long" })
    }

    /// Under `serve` the runner outlives the run of one-shot jobs: a `retry` reopens the closed
    /// run, and once the job is final again the run closes again, with its `run-finished`.
    @Test func aRunReopenedUnderServeClosesAgainOnceItsJobsAreFinal() async throws {
        let failed = AttemptResult(.exited(1))
        let handler = ScriptedHandler(scripts: ["f": [failed]])
        let harness = Harness(handler: handler)
        let runner = Runner(
            workload: Workload(jobs: [job("f")], pipelines: []), store: harness.store, handler: handler,
            clock: harness.clock, observer: harness.observer,
            options: RunnerOptions(logDirectory: "/tmp/jobrunner-tests", runnerPID: 1, serve: true),
            logger: .init(label: "t"), randomSeed: 3)
        let task = Task { try await runner.run() }
        await harness.observer.waitFor(.runFinished)
        let runID = try #require(try await harness.store.currentRunID())
        #expect(try await harness.store.currentSnapshot()?.run.state == .failed)
        try await harness.store.post([request(.retry, "f")], runID: runID)
        runner.poke()
        await harness.observer.waitFor(.succeeded, job: "f")
        runner.requestStop(signal: SIGTERM)
        _ = try await task.value
        #expect(try await harness.store.currentSnapshot()?.run.state == .succeeded)
        #expect(
            harness.observer.events.filter { $0.kind == .runFinished }.map(\.state) == [
                "failed", "succeeded",
            ])
    }

    @Test func skipOfARunningJobLetsDependentsGoOn() async throws {
        let handler = ScriptedHandler(scripts: ["long": [killed]], hold: ["long"])
        let harness = Harness(handler: handler)
        let runner = runner(
            harness, [job("long"), job("after", needs: ["long"])], orphans: nil)
        let task = Task { try await runner.run() }
        await handler.waitForStarts(1)
        let runID = try #require(try await harness.store.currentRunID())
        try await harness.store.post([request(.skip, "long")], runID: runID)
        runner.poke()
        #expect(try await task.value.state == .succeeded)
        #expect(handler.startedJobs == ["long", "after"])
        #expect(try await harness.store.currentSnapshot()?.jobs["long"]?.state == .skipped)
    }

    @Test func aSuspendedPipelineStartsNothingUntilResumed() async throws {
        let handler = ScriptedHandler(hold: ["a"])
        let harness = Harness(handler: handler)
        let runner = runner(
            harness, [job("a", pipeline: "p"), job("b", pipeline: "p")],
            pipelines: [PipelineDefinition(name: "p", maxConcurrent: 1)], orphans: nil)
        let task = Task { try await runner.run() }
        await handler.waitForStarts(1)
        _ = try await harness.store.updatePipeline("p") { $0.suspended += 2 }
        runner.poke()
        await harness.observer.waitFor(.suspended)
        handler.release("a")
        await harness.observer.waitFor(.succeeded, job: "a")
        #expect(handler.startedJobs == ["a"], "b does not start while p is suspended")

        _ = try await harness.store.updatePipeline("p") { $0.suspended -= 1 }
        runner.poke()
        _ = try await harness.store.updatePipeline("p") { $0.suspended -= 1 }
        runner.poke()
        #expect(try await task.value.state == .succeeded)
        #expect(handler.startedJobs == ["a", "b"])
        // Between them, the run said once that only the suspension held it back (`waiting`).
        let pipelineEvents = harness.observer.events.filter { $0.pipeline != nil && $0.kind != .waiting }.map(
            \.kind)
        #expect(harness.observer.events.contains { $0.kind == .waiting && $0.pipeline == "p" })
        #expect(
            pipelineEvents == [.suspended, .resumed], "nested: resumed only when the count is back at zero")
    }

    @Test func offlineRetryReopensAFinishedRunForTheNextRunner() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let run = RunRecord(
            id: "R", state: .failed, startedAt: start, finishedAt: start, jobIDs: ["a", "b", "c", "d"],
            runnerPID: 1)
        var failed = JobRecord(
            jobID: "a", pipeline: "default", maxAttempts: 1, state: .failed, reason: .ended(.exit(1)),
            attempts: 1)
        failed.finishedAt = start
        let snapshot = RunSnapshot(
            run: run,
            jobs: [
                "a": failed,
                "b": JobRecord(
                    jobID: "b", pipeline: "default", needs: ["a"], state: .blocked,
                    reason: .ended(.blockedBy("a"))),
                "c": JobRecord(
                    jobID: "c", pipeline: "default", needs: ["b"], state: .blocked,
                    reason: .ended(.blockedBy("b"))),
                "d": JobRecord(jobID: "d", pipeline: "default", state: .succeeded, attempts: 1),
            ])
        let (result, decision) = OfflineOperator.apply(request(.retry, "a"), to: snapshot, now: start)
        guard case .applied = result else {
            Issue.record("retry was not applied: \(result)")
            return
        }
        var jobs: [String: JobRecord] = [:]
        var reopenedRun: RunRecord?
        for change in decision.changes {
            if case .putJob(_, let record) = change { jobs[record.jobID] = record }
            if case .putRun(let record) = change { reopenedRun = record }
        }
        #expect(jobs["a"]?.state == .pending)
        #expect(jobs["a"]?.countedAttempts == 0, "a fresh retry budget")
        #expect(jobs["b"]?.state == .pending)
        #expect(jobs["c"]?.state == .pending)
        #expect(jobs["d"] == nil, "a succeeded job is left alone")
        #expect(reopenedRun?.state == .stopped)

        let refused = OfflineOperator.apply(request(.retry, "d"), to: snapshot, now: start).result
        #expect(refused == .refused("d succeeded; only a failed, blocked or cancelled job can be retried"))
        let unknown = OfflineOperator.apply(request(.cancel, "zz"), to: snapshot, now: start).result
        #expect(unknown == .refused("run R has no job 'zz'"))
    }

    @Test func skipOfAFailedJobUnblocksItsDependents() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let run = RunRecord(id: "R", state: .failed, startedAt: start, jobIDs: ["a", "b"], runnerPID: 1)
        let snapshot = RunSnapshot(
            run: run,
            jobs: [
                "a": JobRecord(jobID: "a", pipeline: "default", state: .failed, attempts: 1),
                "b": JobRecord(
                    jobID: "b", pipeline: "default", needs: ["a"], state: .blocked,
                    reason: .ended(.blockedBy("a"))),
            ])
        let changes = OfflineOperator.apply(request(.skip, "a"), to: snapshot, now: start).decision.changes
        let states = changes.compactMap { change -> String? in
            if case .putJob(_, let record) = change { return "\(record.jobID):\(record.state.rawValue)" }
            return nil
        }
        #expect(states == ["a:skipped", "b:pending"])
    }

    /// Skipping the only failed job of a finished run leaves every job final: the run is judged
    /// again and succeeds, as `run`'s exit status would say ("every job succeeded or was skipped").
    @Test func skipOfTheOnlyFailedJobOfAFinishedRunMakesItSucceed() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var run = RunRecord(id: "R", state: .failed, startedAt: start, jobIDs: ["a", "b"], runnerPID: 1)
        run.finishedAt = start
        let snapshot = RunSnapshot(
            run: run,
            jobs: [
                "a": JobRecord(jobID: "a", pipeline: "default", state: .failed, attempts: 1),
                "b": JobRecord(jobID: "b", pipeline: "default", state: .succeeded, attempts: 1),
            ])
        let later = start.addingTimeInterval(60)
        let decision = OfflineOperator.apply(request(.skip, "a"), to: snapshot, now: later).decision
        let runs = decision.changes.compactMap { change -> RunRecord? in
            if case .putRun(let record) = change { return record }
            return nil
        }
        #expect(runs.map(\.state) == [.succeeded])
        #expect(runs.first?.finishedAt == later)
    }
}
