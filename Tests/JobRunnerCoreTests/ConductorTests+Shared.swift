import Foundation
import JobRunnerCore
import Testing

// The conductor's scenarios about what its runs share and how they end: reloads, pipeline slots,
// the shared `satisfy`, retention, stops, resumption, connectivity, operators and seeded jitter.

@Suite struct ConductorReloadTests {
    @Test func aRemovedJobsWaitingOccurrenceNeverRuns() {
        var driver = ConductorDriver(
            oneShot: [job("build")], periodic: [periodicJob("deploy", needs: ["build"])])
        #expect(driver.conductor.waiting.map(\.jobID) == ["deploy"])
        driver.send(.reload(Workload(jobs: [job("build")], pipelines: []), []))
        #expect(driver.conductor.waiting.isEmpty)
        driver.succeed("build")
        #expect(driver.started.isEmpty, "its definition as first loaded must not start it")
        #expect(driver.occurrences(of: "deploy").isEmpty)
    }

    @Test func aJobAddedByAReloadIsScheduled() {
        var driver = ConductorDriver(periodic: [periodicJob("a")])
        let (definition, entry) = periodicJob("b")
        driver.send(
            .reload(
                Workload(jobs: [periodicJob("a").0, definition], pipelines: []), [periodicJob("a").1, entry]))
        #expect(driver.started == ["b@0"])
    }

    @Test func aRemovedJobsRunningOccurrenceEndsAndNoOtherStarts() {
        var driver = ConductorDriver(periodic: [periodicJob("a"), periodicJob("b")])
        driver.send(.reload(Workload(jobs: [periodicJob("a").0], pipelines: []), [periodicJob("a").1]))
        driver.succeed("b", at: 0)
        #expect(driver.occurrences(of: "b").map(\.state) == [.succeeded])
        driver.succeed("a", at: 0)
        driver.advance(to: 60)
        #expect(driver.started == ["a@60"])
    }

    @Test func aChangedScheduleMovesTheNextDate() {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        driver.succeed("tick", at: 0)
        #expect(driver.conductor.nextWakeDate == ConductorDriver.date(60))
        let faster = periodicJob("tick", every: 10)
        driver.send(.reload(Workload(jobs: [faster.0], pipelines: []), [faster.1]))
        #expect(driver.conductor.nextWakeDate.map { $0 <= ConductorDriver.date(10) } == true)
    }

    @Test func aReloadAfterAStopStartsNothing() {
        var driver = ConductorDriver(periodic: [periodicJob("a")])
        driver.send(.stop)
        let (definition, entry) = periodicJob("b")
        driver.send(.reload(Workload(jobs: [definition], pipelines: []), [entry]))
        #expect(driver.started.isEmpty)
    }
}

@Suite struct ConductorSlotTests {
    let one = [PipelineDefinition(name: "p", maxConcurrent: 1)]

    @Test func anOccurrenceWaitsForTheSlotTheOneShotRunHolds() {
        var driver = ConductorDriver(
            oneShot: [job("build", pipeline: "p")], periodic: [periodicJob("tick", pipeline: "p")],
            pipelines: one)
        #expect(driver.started == ["build"])
        #expect(driver.state("tick", at: 0) == .pending, "ready, waiting for the slot")
        driver.succeed("build")
        #expect(driver.started == ["tick@0"])
    }

    @Test func aOneShotJobWaitsForTheSlotAnOccurrenceHolds() {
        var driver = ConductorDriver(
            oneShot: [job("a", pipeline: "q"), job("b", needs: ["a"], pipeline: "p")],
            periodic: [periodicJob("tick", pipeline: "p")], pipelines: one + [PipelineDefinition(name: "q")])
        #expect(Set(driver.started) == ["a", "tick@0"])
        driver.succeed("a")
        #expect(driver.started.isEmpty)
        #expect(driver.conductor.main.record("b")?.state == .pending)
        driver.succeed("tick", at: 0)
        #expect(driver.started == ["b"], "freed by the occurrence's close: the run is alone again")
    }

    @Test func theOneShotRunTakesItsReadyJobsFirstWhenItFreesASlot() {
        var driver = ConductorDriver(
            oneShot: [job("a", pipeline: "p"), job("b", needs: ["a"], pipeline: "p")],
            periodic: [periodicJob("tick", every: 10, pipeline: "p")], pipelines: one)
        #expect(driver.started == ["a"])
        driver.succeed("a")
        #expect(driver.started == ["b"], "decided in the same step, before the board is looked at")
        driver.succeed("b")
        #expect(driver.started == ["tick@0"])
    }

    @Test func theJobsCapCountsEveryRun() {
        var driver = ConductorDriver(
            oneShot: [job("build")], periodic: [periodicJob("tick")], maxRunning: 1)
        #expect(driver.started == ["build"])
        driver.succeed("build")
        #expect(driver.started == ["tick@0"])
    }

    @Test func twoOccurrencesShareThePipelinesSlots() {
        var driver = ConductorDriver(
            periodic: [periodicJob("a", pipeline: "p"), periodicJob("b", pipeline: "p")], pipelines: one)
        #expect(driver.started.count == 1)
        let first = driver.started.first ?? ""
        let other = first.hasPrefix("a") ? "b" : "a"
        driver.succeed(first.hasPrefix("a") ? "a" : "b", at: 0)
        #expect(driver.started == ["\(other)@0"])
    }

    @Test func aSuspendedPipelineHoldsOccurrencesAndOneShotJobsAlike() {
        var driver = ConductorDriver(
            oneShot: [job("a", pipeline: "p"), job("b", needs: ["a"], pipeline: "p")],
            periodic: [periodicJob("tick", pipeline: "p")],
            pipelines: [PipelineDefinition(name: "p", maxConcurrent: 4)])
        driver.send(.suspensions(["p": 1]))
        driver.succeed("a")
        driver.succeed("tick", at: 0)
        driver.advance(to: 60)
        #expect(driver.started.isEmpty)
        driver.send(.suspensions(["p": 0]))
        #expect(Set(driver.started) == ["b", "tick@60"])
    }
}

@Suite struct ConductorSatisfyTests {
    @Test func oneSatisfyServesEveryRunThatAsks() {
        var driver = ConductorDriver(oneShot: [job("build")], periodic: [periodicJob("tick")])
        let tick = ConductorDriver.run("tick", 0)
        let first = driver.join("main", "token")
        let second = driver.join(tick, "token")
        let twice = driver.join("main", "token")
        let other = driver.join("main", "other")
        #expect(first && !second && !twice, "one at a time per constraint")
        #expect(other, "each constraint has its own")
        #expect(driver.conductor.satisfyWaiters("token") == ["main", tick], "asked twice, listed once")
        driver.send(.satisfyEnded(constraint: "token", .satisfied))
        #expect(driver.conductor.satisfyWaiters("token").isEmpty)
        let next = driver.join("main", "token")
        #expect(next, "the next one starts anew")
    }

    @Test func theEndOfASatisfyReachesEachRunWaitingOnIt() {
        let constrained = [JobDefinition(id: "build", handler: .shell("true"), constraints: ["token"])]
        var driver = ConductorDriver(
            oneShot: constrained, periodic: [periodicJob("tick", constraints: ["token"])])
        let checks = driver.last.effects.filter { if case .checkConstraints = $0 { true } else { false } }
        #expect(checks.count == 2)
        let tick = ConductorDriver.run("tick", 0)
        driver.send(.run("main", .constraintsChecked(jobID: "build", failed: "token")))
        driver.send(.run(tick, .constraintsChecked(jobID: "tick", failed: "token")))
        let started = driver.join("main", "token")
        let joined = driver.join(tick, "token")
        #expect(started && !joined)
        driver.send(.satisfyEnded(constraint: "token", .satisfied))
        #expect(Set(driver.started) == ["build", "tick@0"])
    }

    @Test func aFailedSatisfyFailsTheWaitingJobsOfEveryRun() {
        let constrained = [JobDefinition(id: "build", handler: .shell("true"), constraints: ["token"])]
        var driver = ConductorDriver(
            oneShot: constrained, periodic: [periodicJob("tick", constraints: ["token"])])
        let tick = ConductorDriver.run("tick", 0)
        driver.send(.run("main", .constraintsChecked(jobID: "build", failed: "token")))
        driver.send(.run(tick, .constraintsChecked(jobID: "tick", failed: "token")))
        _ = driver.join("main", "token")
        _ = driver.join(tick, "token")
        driver.send(.satisfyEnded(constraint: "token", .failed(lastLine: "no network")))
        #expect(driver.conductor.main.record("build")?.state == .failed)
        #expect(driver.occurrences(of: "tick").map(\.state) == [.failed])
    }
}

@Suite struct ConductorRetentionTests {
    /// Earlier occurrences of `tick`: retention counts each periodic job's occurrences apart
    /// from other runs (SPEC 5.12).
    func finished(_ count: Int) -> [RunRecord] {
        (0..<count).map { index in
            var run = RunRecord(
                id: "old-\(index)", state: .succeeded,
                startedAt: ConductorDriver.date(Double(index) - 10_000),
                finishedAt: ConductorDriver.date(Double(index) - 10_000), jobIDs: ["tick"], runnerPID: 1)
            run.occurrenceOf = "tick"
            run.scheduledAt = run.startedAt
            return run
        }
    }

    @Test func closingRunsPrunesTheOldestBeyondTheLimitWithTheirLogs() {
        var driver = ConductorDriver(
            oneShot: [job("build")],
            periodic: [periodicJob("tick")], retention: RetentionPolicy(runs: 3), finished: finished(3))
        driver.succeed("tick", at: 0)
        #expect(driver.deleted == ["old-0"])
        #expect(driver.last.effects.contains(.removeLogs(runIDs: ["old-0"])))
    }

    @Test func runsUnderWayAreNeverPruned() {
        var driver = ConductorDriver(
            oneShot: [job("build")], periodic: [periodicJob("tick")], retention: RetentionPolicy(runs: 1),
            finished: finished(2))
        driver.succeed("tick", at: 0)
        #expect(!driver.deleted.contains("main"))
        #expect(Set(driver.deleted) == ["old-0", "old-1"])
    }

    @Test func pruningWaitsForATenthOfTheLimitOrAMinute() {
        var driver = ConductorDriver(
            oneShot: [job("build")],
            periodic: [periodicJob("tick", every: 10)], retention: RetentionPolicy(runs: 20),
            finished: finished(20))
        driver.succeed("tick", at: 0)
        #expect(!driver.deleted.isEmpty, "the first close prunes")
        driver.advance(to: 10)
        driver.succeed("tick", at: 10)
        #expect(driver.deleted.isEmpty, "one close of a batch of two")
        driver.advance(to: 20)
        driver.succeed("tick", at: 20)
        #expect(!driver.deleted.isEmpty)
    }

    @Test func tooOldRunsArePrunedWhateverTheirNumber() {
        var driver = ConductorDriver(
            oneShot: [job("build")],
            periodic: [periodicJob("tick")], retention: RetentionPolicy(runs: 100, age: .seconds(3600)),
            finished: finished(2))
        driver.succeed("tick", at: 0)
        #expect(Set(driver.deleted) == ["old-0", "old-1"])
    }
}

@Suite struct ConductorStopTests {
    @Test func aStopMakesHeldOccurrencesRunsForTheNextRunner() {
        var driver = ConductorDriver(
            oneShot: [job("build")], periodic: [periodicJob("deploy", needs: ["build"])])
        driver.send(.stop)
        #expect(driver.conductor.waiting.isEmpty)
        #expect(driver.runs[ConductorDriver.run("deploy", 0)] != nil)
        #expect(driver.started.isEmpty)
    }

    @Test func afterAStopNothingNewStartsAndNoWakeIsWanted() {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        driver.send(.stop)
        #expect(driver.conductor.nextWakeDate == nil)
        driver.advance(to: 60)
        #expect(driver.started.isEmpty)
        #expect(driver.occurrences(of: "tick").count == 1)
    }

    @Test func closeAllLeavesOccurrencesUnderWayStoppedForTheNextRunner() {
        var driver = ConductorDriver(oneShot: [job("build")], periodic: [periodicJob("tick")])
        driver.send(.stop)
        driver.end("build", AttemptResult(.interrupted(.runnerStopped)))
        driver.end("tick", in: ConductorDriver.run("tick", 0), AttemptResult(.interrupted(.runnerStopped)))
        #expect(driver.conductor.isSettled)
        var conductor = driver.conductor
        let closing = conductor.closeAll(now: driver.now)
        let states = closing.changes.compactMap { if case .putRun(let run) = $0 { run.state } else { nil } }
        #expect(states == [.stopped, .stopped])
    }

    @Test func anAttemptThatNeverBeganIsInterruptedNotFailed() {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        guard let order = driver.orders.first else {
            Issue.record("nothing started")
            return
        }
        driver.send(.notStarted(order))
        #expect(driver.state("tick", at: 0) != .failed)
        #expect(driver.conductor.failedOccurrences == 0)
    }

    @Test func anInputForARunAlreadyClosedGoesNowhere() {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        driver.succeed("tick", at: 0)
        driver.send(.run(ConductorDriver.run("tick", 0), .probed(online: false)))
        #expect(driver.last.isEmpty)
    }
}

@Suite struct ConductorResumeTests {
    @Test func anUnfinishedOccurrenceIsResumedNotStartedAgain() {
        let runID = ConductorDriver.run("tick", 0)
        var run = RunRecord(
            id: runID, state: .running, startedAt: ConductorDriver.origin, jobIDs: ["tick"], runnerPID: 9)
        run.occurrenceOf = "tick"
        run.scheduledAt = ConductorDriver.origin
        var record = JobRecord(jobID: "tick", pipeline: "default")
        record.state = .running
        record.attempts = 1
        var schedule = ScheduleRecord(
            jobID: "tick", anchor: ConductorDriver.origin, lastScheduled: ConductorDriver.origin,
            schedule: "every 60.0s")
        schedule.nextDue = ConductorDriver.date(60)
        let snapshot = RunSnapshot(run: run, jobs: ["tick": record])
        let driver = ConductorDriver(
            periodic: [periodicJob("tick")], records: ["tick": schedule],
            unfinished: [(Occurrence(jobID: "tick", scheduledAt: ConductorDriver.origin), snapshot)],
            at: ConductorDriver.date(5))
        #expect(driver.conductor.occurrence(ofRun: runID) != nil)
        var later = driver
        later.send(.run(runID, .runnerDied))
        #expect(later.started == ["tick@0"], "its job starts again in the same run")
        #expect(later.occurrences(of: "tick").count == 1)
    }
}

@Suite struct ConductorConnectivityTests {
    @Test func aProbeAnswerReachesEveryRunAndOnlyTheAskerJudgesOnIt() {
        var driver = ConductorDriver(oneShot: [job("build")], periodic: [periodicJob("tick")])
        driver.send(.probed(runID: ConductorDriver.run("tick", 0), online: false))
        #expect(!driver.conductor.online)
        #expect(driver.conductor.main.record("build")?.state == .running)
    }

    @Test func anOccurrenceOpenedOfflineWaitsForTheInternet() {
        let internet = JobDefinition(id: "tick", handler: .shell("true"), requiresInternet: true)
        var driver = ConductorDriver(periodic: [(internet, everyMinute("tick"))], online: false)
        #expect(driver.started.isEmpty)
        #expect(driver.reason("tick", at: 0) == .waiting(.internet))
        driver.send(.connectivity(online: true))
        #expect(driver.started == ["tick@0"])
    }
}

@Suite struct ConductorOperatorTests {
    @Test func aRetryReopensTheClosedOneShotRunUnderServeAndItClosesAgain() {
        var driver = ConductorDriver(oneShot: [job("build")])
        driver.fail("build")
        #expect(driver.runs["main"]?.state == .failed)
        driver.send(
            .run(
                "main",
                .operatorRequests(
                    [OperatorRequest(id: 1, kind: .retry, jobID: "build", requestedAt: driver.now)],
                    stored: true)))
        #expect(driver.started == ["build"])
        driver.succeed("build")
        #expect(driver.runs["main"]?.state == .succeeded)
    }

    @Test func anOperatorCancelOfARunningOccurrenceEndsItsAttempt() {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        let runID = ConductorDriver.run("tick", 0)
        driver.send(
            .run(
                runID,
                .operatorRequests(
                    [OperatorRequest(id: 1, kind: .cancel, jobID: "tick", requestedAt: driver.now)],
                    stored: true)))
        #expect(driver.ended == ["tick@0"])
        driver.end("tick", in: runID, AttemptResult(.interrupted(.runnerStopped)))
        #expect(driver.occurrences(of: "tick").map(\.state) == [.failed])
    }
}

@Suite struct ConductorRandomTests {
    /// The backoff delays an occurrence's failures give, on a conductor seeded with `seed`.
    func delays(seed: UInt64) -> [Date] {
        let retry = RetryPolicy(
            attempts: 4, delay: .seconds(10), factor: 2, maxDelay: .seconds(600), jitter: 0.5)
        var driver = ConductorDriver(
            periodic: [periodicJob("a", retry: retry), periodicJob("b", retry: retry)], seed: seed)
        var dates: [Date] = []
        for id in ["a", "b"] {
            driver.fail(id, at: 0)
            if let date = driver.conductor.occurrenceScheduler(ConductorDriver.run(id, 0))?.record(id)?
                .nextAttemptAt
            {
                dates.append(date)
            }
        }
        return dates
    }

    @Test func occurrencesDrawTheirJitterFromTheInjectedSeed() {
        #expect(delays(seed: 7).count == 2)
        #expect(delays(seed: 7) == delays(seed: 7))
        #expect(delays(seed: 7) != delays(seed: 8))
    }
}
