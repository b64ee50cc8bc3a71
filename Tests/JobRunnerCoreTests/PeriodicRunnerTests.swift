import Foundation
import JobRunnerCore
import JobRunnerTesting
import Logging
import Testing

/// Periodic jobs through the whole runner, on the manual clock: occurrences as runs of their
/// own, stored schedule records, `run` and `serve`.
@Suite struct PeriodicRunnerTests {
    func runner(
        _ harness: Harness, _ jobs: [JobDefinition], periodic: [Timetable.Job], serve: Bool = false
    ) -> Runner {
        Runner(
            workload: Workload(jobs: jobs, pipelines: []), store: harness.store, handler: harness.handler,
            clock: harness.clock, observer: harness.observer,
            options: RunnerOptions(logDirectory: "/tmp/jobrunner-tests", runnerPID: 1, serve: serve),
            logger: Logger(label: "t"), randomSeed: 1, periodic: periodic)
    }

    func occurrenceRuns(_ store: any QueueStore) async throws -> [RunRecord] {
        try await store.runs().filter { $0.occurrenceOf != nil }.sorted {
            ($0.scheduledAt ?? .distantPast) < ($1.scheduledAt ?? .distantPast)
        }
    }

    @Test func runStartsTheDueOccurrenceBesideTheOneShotJobsAndReturns() async throws {
        let harness = Harness()
        let summary = try await runner(
            harness, [job("build"), job("refresh")], periodic: [everyMinute("refresh")]
        )
        .run()
        #expect(summary.state == .succeeded)
        #expect(Set(harness.handler.startedJobs) == ["build", "refresh"])
        let occurrences = try await occurrenceRuns(harness.store)
        #expect(occurrences.map(\.state) == [.succeeded])
        #expect(occurrences.first?.scheduledAt == harness.clock.now())
        #expect(
            try await harness.store.currentSnapshot()?.run.jobIDs == ["build"],
            "the run holds the one-shot jobs")
        #expect(try await harness.store.schedules()["refresh"]?.lastResult == .succeeded)
    }

    @Test func aSecondRunStartsOnlyWhatHasComeDueSince() async throws {
        let harness = Harness()
        let periodic = [everyMinute("refresh")]
        _ = try await runner(harness, [job("refresh")], periodic: periodic).run()
        _ = try await runner(harness, [job("refresh")], periodic: periodic).run()
        #expect(harness.handler.startedJobs == ["refresh"], "nothing new was due")
        harness.clock.advance(by: 60)
        _ = try await runner(harness, [job("refresh")], periodic: periodic).run()
        #expect(harness.handler.startedJobs == ["refresh", "refresh"])
        #expect(try await occurrenceRuns(harness.store).count == 2)
    }

    /// Periodic jobs alone: each start opens the empty run of one-shot jobs again, which keeps
    /// its first start (`status` moved it to each later start).
    @Test func theEmptyRunOpenedAgainKeepsItsFirstStart() async throws {
        let harness = Harness()
        let periodic = [everyMinute("refresh")]
        _ = try await runner(harness, [job("refresh")], periodic: periodic).run()
        let first = try #require(try await harness.store.currentSnapshot()?.run)
        harness.clock.advance(by: 90)
        _ = try await runner(harness, [job("refresh")], periodic: periodic).run()
        let again = try #require(try await harness.store.currentSnapshot()?.run)
        #expect(again.id == first.id, "opened again, not one more")
        #expect(again.startedAt == first.startedAt)
    }

    @Test func serveKeepsFiringUntilStoppedWithoutDuplicates() async throws {
        let harness = Harness()
        let runner = runner(harness, [job("refresh")], periodic: [everyMinute("refresh")], serve: true)
        let task = Task { try await runner.run() }
        await harness.observer.waitFor(.succeeded, job: "refresh")
        for minute in 1...3 {
            await harness.clock.waitForSleepers()
            harness.clock.advance(by: 60)
            await harness.handler.waitForStarts(minute + 1)
        }
        runner.requestStop(signal: SIGTERM)
        _ = try await task.value
        let dates = try await occurrenceRuns(harness.store).compactMap(\.scheduledAt)
        #expect(dates.count == 4)
        #expect(Set(dates).count == dates.count, "no occurrence twice")
    }

    @Test func anOccurrenceThatComesDueWhileTheLastRunsIsSkippedAndRecorded() async throws {
        let handler = ScriptedHandler(hold: ["refresh"])
        let harness = Harness(handler: handler)
        let runner = runner(harness, [job("refresh")], periodic: [everyMinute("refresh")], serve: true)
        let task = Task { try await runner.run() }
        await handler.waitForStarts(1)
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: 60)
        await harness.observer.waitFor(.disabled, job: "refresh")
        handler.release("refresh")
        await harness.observer.waitFor(.succeeded, job: "refresh")
        runner.requestStop(signal: SIGTERM)
        _ = try await task.value
        #expect(try await occurrenceRuns(harness.store).map(\.state) == [.succeeded, .skipped])
        #expect(handler.startedJobs == ["refresh"])
    }

    @Test func aPeriodicJobWaitsForAOneShotJobItNeeds() async throws {
        let handler = ScriptedHandler(hold: ["setup"])
        let harness = Harness(handler: handler)
        var refresh = job("refresh")
        refresh.needs = ["setup"]
        let runner = runner(harness, [job("setup"), refresh], periodic: [everyMinute("refresh")])
        let task = Task { try await runner.run() }
        await handler.waitForStarts(1)
        #expect(handler.startedJobs == ["setup"])
        handler.release("setup")
        #expect(try await task.value.state == .succeeded)
        #expect(handler.startedJobs == ["setup", "refresh"])
    }

    /// `serve` reloads while an occurrence waits for a one-shot job it needs, and the reload
    /// removes the periodic job: once the need is final, nothing of the removed job runs.
    @Test func anOccurrenceHeldForItsNeedsDoesNotRunOnceAReloadRemovedItsJob() async throws {
        let handler = ScriptedHandler(hold: ["setup"])
        let harness = Harness(handler: handler)
        var refresh = job("refresh")
        refresh.needs = ["setup"]
        let runner = runner(
            harness, [job("setup"), refresh], periodic: [everyMinute("refresh")], serve: true)
        let task = Task { try await runner.run() }
        await handler.waitForStarts(1)
        runner.reload(Workload(jobs: [job("setup")], pipelines: []))
        handler.release("setup")
        await harness.observer.waitFor(.succeeded, job: "setup")
        // A tick after the reload has been taken: the runner sleeps until the next one.
        await harness.clock.waitForSleepers()
        runner.requestStop(signal: SIGTERM)
        _ = try await task.value
        #expect(handler.startedJobs == ["setup"])
        #expect(try await occurrenceRuns(harness.store).isEmpty)
        #expect(try await harness.store.schedules()["refresh"]?.backlog == [])
    }

    /// A periodic job gets the outputs of what it needs (SPEC 5.8): a one-shot job's from the
    /// current run, a periodic job's from its latest occurrence, also when an earlier runner ran
    /// that occurrence.
    @Test func aPeriodicJobReceivesTheOutputsOfItsNeeds() async throws {
        let succeeded = { (outputs: [String: String]) in
            AttemptResult(.succeeded, exitCode: 0, outputs: outputs)
        }
        let handler = ScriptedHandler(scripts: [
            "setup": [succeeded(["path": "/srv"])],
            "fetch": [succeeded(["etag": "1"]), succeeded(["etag": "2"])],
        ])
        let harness = Harness(handler: handler)
        var report = job("report")
        report.needs = ["setup", "fetch"]
        let jobs = [job("setup"), job("fetch"), report]
        let periodic = [everyMinute("fetch", seconds: 7200), everyMinute("report", seconds: 3600)]
        _ = try await runner(harness, jobs, periodic: periodic).run()
        #expect(
            handler.lastRequest("report")?.neededOutputs == [
                "setup": ["path": "/srv"], "fetch": ["etag": "1"],
            ])

        // A new runner, with only `report` due: `fetch`'s outputs come from its stored run.
        harness.clock.advance(by: 3600)
        _ = try await runner(harness, jobs, periodic: periodic).run()
        #expect(handler.startedJobs.filter { $0 == "fetch" }.count == 1)
        #expect(handler.lastRequest("report")?.neededOutputs["fetch"] == ["etag": "1"])

        // Both due: `report` waits for `fetch`'s new occurrence and gets its outputs.
        harness.clock.advance(by: 3600)
        _ = try await runner(harness, jobs, periodic: periodic).run()
        #expect(handler.startedJobs.filter { $0 == "report" }.count == 3)
        #expect(handler.lastRequest("report")?.neededOutputs["fetch"] == ["etag": "2"])
    }

    /// An occurrence and the run of one-shot jobs share their pipeline's `maxConcurrent`, and
    /// `--jobs` (SPEC 5.3, 4): the occurrence waits while the one-shot job holds the only slot,
    /// and starts once it ends.
    @Test(
        arguments: [(maxConcurrent: 1, maxRunning: nil), (maxConcurrent: 0, maxRunning: 1)] as [(Int, Int?)])
    func anOccurrenceWaitsForASlotTheOneShotRunHolds(maxConcurrent: Int, maxRunning: Int?) async throws {
        let handler = ScriptedHandler(hold: ["build"])
        let harness = Harness(handler: handler)
        let runner = Runner(
            workload: Workload(
                jobs: [job("build", pipeline: "p"), job("refresh", pipeline: "p")],
                pipelines: [PipelineDefinition(name: "p", maxConcurrent: maxConcurrent)]),
            store: harness.store, handler: handler, clock: harness.clock, observer: harness.observer,
            options: RunnerOptions(
                maxRunning: maxRunning, logDirectory: "/tmp/jobrunner-tests", runnerPID: 1),
            logger: Logger(label: "t"), randomSeed: 1, periodic: [everyMinute("refresh")])
        let task = Task { try await runner.run() }
        await handler.waitForStarts(1)
        // The occurrence's opening is stored before it is reported: a start would be there.
        await harness.observer.waitFor(.queued, job: "refresh")
        let occurrence = try #require(try await occurrenceRuns(harness.store).first)
        #expect(try await harness.store.snapshot(runID: occurrence.id)?.jobs["refresh"]?.state == .pending)
        handler.release("build")
        #expect(try await task.value.state == .succeeded)
        #expect(handler.startedJobs == ["build", "refresh"])
        #expect(handler.maxConcurrent == 1)
    }

    /// The other way round: the occurrence holds the only slot, and the one-shot job that
    /// becomes ready meanwhile starts once the occurrence's attempt ends.
    @Test func aOneShotJobWaitsForTheSlotAnOccurrenceHolds() async throws {
        let handler = ScriptedHandler(hold: ["refresh"])
        let harness = Harness(handler: handler)
        let runner = Runner(
            workload: Workload(
                jobs: [
                    job("setup"), job("build", needs: ["setup"], pipeline: "p"),
                    job("refresh", pipeline: "p"),
                ],
                pipelines: [PipelineDefinition(name: "p", maxConcurrent: 1)]),
            store: harness.store, handler: handler, clock: harness.clock, observer: harness.observer,
            options: RunnerOptions(logDirectory: "/tmp/jobrunner-tests", runnerPID: 1),
            logger: Logger(label: "t"), randomSeed: 1, periodic: [everyMinute("refresh")])
        let task = Task { try await runner.run() }
        await harness.observer.waitFor(.succeeded, job: "setup")
        await handler.waitForStarts(2)
        // `build` became ready in the commit that stored `setup`'s end; it would have started there.
        #expect(try await harness.store.currentSnapshot()?.jobs["build"]?.state == .pending)
        handler.release("refresh")
        #expect(try await task.value.state == .succeeded)
        // `setup` and `refresh` start at the opening in either order (each attempt is a task of
        // its own); `build` only after `refresh` gave its slot back.
        #expect(handler.startedJobs.last == "build")
        #expect(handler.startedJobs.count == 3)
    }

    @Test func aStoppedRunnersOccurrenceIsResumedNotRepeated() async throws {
        let handler = ScriptedHandler(hold: ["refresh"])
        let harness = Harness(handler: handler)
        let first = runner(harness, [job("refresh")], periodic: [everyMinute("refresh")], serve: true)
        let task = Task { try await first.run() }
        await handler.waitForStarts(1)
        first.requestStop(signal: SIGTERM)
        _ = try await task.value
        #expect(try await occurrenceRuns(harness.store).map(\.state) == [.stopped])
        handler.release("refresh")
        _ = try await runner(harness, [job("refresh")], periodic: [everyMinute("refresh")]).run()
        let runs = try await occurrenceRuns(harness.store)
        #expect(runs.map(\.state) == [.succeeded], "the same occurrence, resumed")
        #expect(handler.calls.map(\.attempt) == [1, 2])
    }

    @Test func retentionKeepsTheStoreBoundedWhileServing() async throws {
        let store = InMemoryQueueStore()
        let harness = Harness(store: store)
        let runner = Runner(
            workload: Workload(jobs: [job("refresh")], pipelines: [], retention: RetentionPolicy(runs: 3)),
            store: harness.store, handler: harness.handler, clock: harness.clock, observer: harness.observer,
            options: RunnerOptions(logDirectory: "/tmp/jobrunner-tests", runnerPID: 1, serve: true),
            logger: Logger(label: "t"), randomSeed: 1, periodic: [everyMinute("refresh")])
        let task = Task { try await runner.run() }
        await harness.observer.waitFor(.succeeded, job: "refresh")
        let readsAtStart = store.runsReadCount
        for minute in 1...8 {
            await harness.clock.waitForSleepers()
            harness.clock.advance(by: 60)
            await harness.handler.waitForStarts(minute + 1)
        }
        runner.requestStop(signal: SIGTERM)
        _ = try await task.value
        #expect(harness.handler.startedJobs.count == 9)
        let kept = try await harness.store.runs().filter { $0.state.isFinal }
        #expect(
            kept.count <= 3 + 2,
            "at most 3 finished runs, plus the ones that ended as it stopped: \(kept.count)")
        #expect(
            store.runsReadCount == readsAtStart + 1,
            "retention decides from what the runner knows, not by reading every run back (one read here)")
    }

    @Test func aPeriodicJobWaitsForTheOccurrenceOfAPeriodicJobItNeeds() async throws {
        let harness = Harness()
        var downstream = job("downstream")
        downstream.needs = ["upstream"]
        let summary = try await runner(
            harness, [downstream, job("upstream")],
            periodic: [everyMinute("downstream"), everyMinute("upstream")]
        ).run()
        #expect(summary.failedOccurrences == 0)
        #expect(
            harness.handler.startedJobs == ["upstream", "downstream"], "due together, the needed one first")
    }

    @Test func aBlockedOccurrenceDoesNotHoldTheNextOnesBack() async throws {
        let handler = ScriptedHandler(scripts: ["upstream": [.failed(exitCode: 1), .succeeded]])
        let harness = Harness(handler: handler)
        var downstream = job("downstream")
        downstream.needs = ["upstream"]
        let runner = runner(
            harness, [downstream, job("upstream")],
            periodic: [everyMinute("downstream"), everyMinute("upstream")],
            serve: true)
        let task = Task { try await runner.run() }
        await harness.observer.waitFor(.blocked, job: "downstream")
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: 60)
        await harness.observer.waitFor(.succeeded, job: "downstream")
        runner.requestStop(signal: SIGTERM)
        let summary = try await task.value
        #expect(summary.failedOccurrences == 2, "upstream failed, downstream blocked")
        let states = try await occurrenceRuns(harness.store).filter { $0.occurrenceOf == "downstream" }.map(
            \.state)
        #expect(states == [.failed, .succeeded])
    }
}
