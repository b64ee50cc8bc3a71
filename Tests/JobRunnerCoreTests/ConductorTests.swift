import Foundation
import JobRunnerCore
import Testing

/// The conductor stepped scenario by scenario on a hand-moved date: occurrences and their
/// timetable, overlap and catch-up, needs across runs, the slots runs share, the shared
/// `satisfy`, retention, reloads and stops. Each test is a few inputs and what they decided.
@Suite struct ConductorOccurrenceTests {
    @Test func aPeriodicJobsFirstOccurrenceStartsWhenTheConductorOpens() {
        let driver = ConductorDriver(periodic: [periodicJob("tick")])
        #expect(driver.started == ["tick@0"])
        #expect(driver.occurrences(of: "tick").map(\.state) == [.running])
    }

    @Test func theNextOccurrenceStartsWhenTheClockReachesItsDate() {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        driver.succeed("tick", at: 0)
        #expect(driver.conductor.nextWakeDate == ConductorDriver.date(60))
        driver.advance(to: 59)
        #expect(driver.started.isEmpty)
        driver.advance(to: 60)
        #expect(driver.started == ["tick@60"])
    }

    @Test func anOccurrenceThatEndsIsClosedAndRecordedInItsSchedule() {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        driver.succeed("tick", at: 0)
        #expect(driver.occurrences(of: "tick").map(\.state) == [.succeeded])
        #expect(driver.schedules["tick"]?.lastResult == .succeeded)
        #expect(driver.schedules["tick"]?.lastRunID == ConductorDriver.run("tick", 0))
        #expect(driver.events.contains("run-finished "))
    }

    @Test func aFailedOccurrenceCountsAndIsRecordedFailed() {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        driver.fail("tick", at: 0)
        #expect(driver.occurrences(of: "tick").map(\.state) == [.failed])
        #expect(driver.conductor.failedOccurrences == 1)
        #expect(driver.schedules["tick"]?.lastResult == .failed)
    }

    @Test func serveWakesForTheTimetableAndRunDoesNot() {
        var serving = ConductorDriver(periodic: [periodicJob("tick")])
        serving.succeed("tick", at: 0)
        #expect(serving.conductor.nextWakeDate == ConductorDriver.date(60))
        #expect(!serving.conductor.isSettled, "serve goes on")
        var running = ConductorDriver(periodic: [periodicJob("tick")], serve: false)
        running.succeed("tick", at: 0)
        #expect(running.conductor.nextWakeDate == nil)
        #expect(running.conductor.isSettled, "run is done once the due occurrence is final")
    }

    @Test func runIsNotSettledWhileAnOccurrenceRuns() {
        let driver = ConductorDriver(oneShot: [job("build")], periodic: [periodicJob("tick")], serve: false)
        #expect(Set(driver.started) == ["build", "tick@0"])
        var after = driver
        after.succeed("build")
        #expect(!after.conductor.isSettled)
        after.succeed("tick", at: 0)
        #expect(after.conductor.isSettled)
    }

    @Test func twoPeriodicJobsEachGetTheirOwnRun() {
        var driver = ConductorDriver(periodic: [periodicJob("a"), periodicJob("b", every: 30)])
        #expect(Set(driver.started) == ["a@0", "b@0"])
        driver.succeed("a", at: 0)
        driver.succeed("b", at: 0)
        driver.advance(to: 30)
        #expect(driver.started == ["b@30"])
        driver.succeed("b", at: 30)
        driver.advance(to: 60)
        #expect(Set(driver.started) == ["a@60", "b@60"])
    }

    @Test func anOccurrenceRetriesOnItsOwnBackoffAndWakesForIt() {
        let retry = RetryPolicy(attempts: 2, delay: .seconds(5), factor: 1, maxDelay: .seconds(5), jitter: 0)
        var driver = ConductorDriver(periodic: [periodicJob("tick", retry: retry)])
        driver.fail("tick", at: 0)
        #expect(driver.conductor.nextWakeDate == ConductorDriver.date(5))
        driver.advance(to: 5)
        #expect(driver.started == ["tick@0"])
        #expect(driver.attempt("tick", in: ConductorDriver.run("tick", 0)) == 2)
    }
}

@Suite struct ConductorOverlapTests {
    @Test func overlapSkipRecordsTheOccurrenceThatComesDueWhileTheLastRuns() {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        driver.advance(to: 60)
        #expect(driver.started.isEmpty)
        #expect(driver.events == ["disabled tick"])
        #expect(driver.occurrences(of: "tick").map(\.state) == [.running, .skipped])
    }

    @Test func overlapQueueStartsTheNextOccurrenceOnceTheLastEnds() {
        var driver = ConductorDriver(periodic: [periodicJob("tick", overlap: .queue)])
        driver.advance(to: 60)
        #expect(driver.started.isEmpty)
        #expect(driver.schedules["tick"]?.queued == ConductorDriver.date(60))
        driver.succeed("tick", at: 0)
        #expect(driver.started == ["tick@60"])
    }

    @Test func overlapQueueKeepsOneWaitingAndRecordsTheOneItDisplaces() {
        var driver = ConductorDriver(periodic: [periodicJob("tick", overlap: .queue)])
        driver.advance(to: 60)
        driver.advance(to: 120)
        #expect(driver.occurrences(of: "tick").map(\.offset) == [0, 60])
        #expect(driver.occurrences(of: "tick").last?.state == .skipped)
        driver.succeed("tick", at: 0)
        #expect(driver.started == ["tick@120"])
    }

    @Test func overlapReplaceEndsTheRunningAttemptAndSaysWhy() {
        var driver = ConductorDriver(periodic: [periodicJob("tick", overlap: .replace)])
        driver.advance(to: 60)
        #expect(driver.ended == ["tick@0"])
        #expect(driver.started.isEmpty, "the new one waits for the old one's end")
        #expect(driver.last.answers.isEmpty, "no operator request is made up")
        driver.end("tick", in: ConductorDriver.run("tick", 0), AttemptResult(outcome: .interrupted))
        #expect(driver.started == ["tick@60"])
        let replaced = driver.occurrences(of: "tick").first
        #expect(replaced?.state == .failed)
        #expect(
            driver.last.events.first { $0.kind == .cancelled }?.reason
                == "replaced by the next occurrence (overlap: replace)")
    }

    @Test func overlapReplaceCancelsAnOccurrenceWaitingForItsBackoffAtOnce() {
        let retry = RetryPolicy(
            attempts: 3, delay: .seconds(100), factor: 1, maxDelay: .seconds(100), jitter: 0)
        var driver = ConductorDriver(periodic: [periodicJob("tick", overlap: .replace, retry: retry)])
        driver.fail("tick", at: 0)
        #expect(driver.state("tick", at: 0) == .waiting, "its backoff runs until 100 s")
        driver.advance(to: 60)
        #expect(driver.ended.isEmpty, "nothing runs to end")
        #expect(driver.started == ["tick@60"])
        #expect(driver.occurrences(of: "tick").first?.state == .failed)
    }

    @Test func theReplacedWordsReadBackAsTheSameReason() {
        let reason = EndReason.replacedByNextOccurrence
        #expect(JobReason(words: reason.words, state: .cancelled) == .ended(reason))
    }
}

@Suite struct ConductorCatchUpTests {
    /// A record as a runner that last decided the occurrence at `offset` would have left.
    func record(
        _ id: String = "tick", lastScheduled offset: TimeInterval, every seconds: Double = 60
    ) -> [String: ScheduleRecord] {
        var record = ScheduleRecord(
            jobID: id, anchor: ConductorDriver.origin, lastScheduled: ConductorDriver.date(offset),
            schedule: "every \(seconds)s")
        record.lastResult = .succeeded
        return [id: record]
    }

    @Test func catchUpLatestRunsOneAndRecordsTheOthersMissed() {
        let driver = ConductorDriver(
            periodic: [periodicJob("tick")], records: record(lastScheduled: 0), at: ConductorDriver.date(250))
        #expect(driver.started == ["tick@240"])
        #expect(driver.occurrences(of: "tick").map(\.state) == [.missed, .missed, .missed, .running])
    }

    @Test func catchUpNoneRecordsEveryLateDateMissedAndRunsNone() {
        let driver = ConductorDriver(
            periodic: [periodicJob("tick", catchUp: .none)], records: record(lastScheduled: 0),
            at: ConductorDriver.date(330))
        #expect(
            driver.occurrences(of: "tick").map(\.state) == [.missed, .missed, .missed, .missed, .running])
        #expect(driver.started == ["tick@300"], "the latest, less than a minute old, runs")
    }

    @Test func catchUpNoneRunsNothingOlderThanAMinute() {
        let driver = ConductorDriver(
            periodic: [periodicJob("tick", every: 3600, catchUp: .none)],
            records: record(lastScheduled: 0, every: 3600),
            at: ConductorDriver.date(3600 * 3 + 120))
        #expect(driver.started.isEmpty)
        #expect(driver.occurrences(of: "tick").map(\.state) == [.missed, .missed, .missed])
    }

    @Test func catchUpAllRunsEachDateOneAfterAnother() {
        var driver = ConductorDriver(
            periodic: [periodicJob("tick", catchUp: .all)], records: record(lastScheduled: 0),
            at: ConductorDriver.date(130))
        #expect(driver.started == ["tick@60"])
        driver.succeed("tick", at: 60)
        #expect(driver.started == ["tick@120"])
        driver.succeed("tick", at: 120)
        #expect(driver.started.isEmpty)
    }
}

@Suite struct ConductorNeedsTests {
    @Test func anOccurrenceWaitsForTheOneShotJobItNeeds() {
        var driver = ConductorDriver(
            oneShot: [job("build")], periodic: [periodicJob("deploy", needs: ["build"])])
        #expect(driver.started == ["build"])
        #expect(driver.conductor.waiting.map(\.jobID) == ["deploy"])
        #expect(driver.schedules["deploy"]?.backlog == [ConductorDriver.date(0)], "stored as waiting")
        driver.succeed("build")
        #expect(driver.started == ["deploy@0"])
        #expect(driver.schedules["deploy"]?.backlog == [], "released in the commit that starts it")
    }

    @Test func anOccurrenceWhoseOneShotNeedFailedIsBlocked() {
        var driver = ConductorDriver(
            oneShot: [job("build")], periodic: [periodicJob("deploy", needs: ["build"])])
        driver.fail("build")
        #expect(driver.started.isEmpty)
        #expect(driver.occurrences(of: "deploy").map(\.state) == [.failed])
        #expect(driver.events.contains("blocked deploy"))
        #expect(driver.conductor.failedOccurrences == 1)
    }

    @Test func anOccurrenceWaitsForThePeriodicJobItNeeds() {
        var driver = ConductorDriver(periodic: [
            periodicJob("fetch"), periodicJob("report", needs: ["fetch"]),
        ])
        #expect(driver.started == ["fetch@0"])
        driver.succeed("fetch", at: 0)
        #expect(driver.started == ["report@0"])
    }

    @Test func aFailedPeriodicNeedBlocksTheOccurrence() {
        var driver = ConductorDriver(periodic: [
            periodicJob("fetch"), periodicJob("report", needs: ["fetch"]),
        ])
        driver.fail("fetch", at: 0)
        #expect(driver.occurrences(of: "report").map(\.state) == [.failed])
        #expect(driver.events.contains("blocked report"))
    }

    @Test func aBlockedOccurrenceDoesNotHoldTheNextOnesBack() {
        var driver = ConductorDriver(periodic: [
            periodicJob("fetch"), periodicJob("report", needs: ["fetch"]),
        ])
        driver.fail("fetch", at: 0)
        driver.advance(to: 60)
        #expect(driver.started == ["fetch@60"])
        driver.succeed("fetch", at: 60)
        #expect(driver.started == ["report@60"])
    }

    @Test func anOccurrenceReceivesTheOutputsOfItsNeeds() {
        var driver = ConductorDriver(
            oneShot: [job("build")],
            periodic: [periodicJob("fetch"), periodicJob("report", needs: ["build", "fetch"])])
        driver.succeed("build", outputs: ["wheel": "a.whl"])
        driver.succeed("fetch", at: 0, outputs: ["rows": "12"])
        #expect(driver.started == ["report@0"])
        var reads = 0
        let needed = driver.outputsOfNeeds(of: periodicJob("report", needs: ["build", "fetch"]).0) { _, _ in
            reads += 1
            return nil
        }
        #expect(needed == ["build": ["wheel": "a.whl"], "fetch": ["rows": "12"]])
        #expect(reads == 0, "both are known without the store")
    }

    @Test func theOutputsOfAPeriodicNeedAnEarlierRunnerRanAreReadOnce() {
        var record = ScheduleRecord(jobID: "fetch", anchor: ConductorDriver.origin, schedule: "every 60.0s")
        record.lastScheduled = ConductorDriver.date(0)
        record.lastResult = .succeeded
        record.lastRunID = "earlier"
        var driver = ConductorDriver(
            periodic: [periodicJob("fetch"), periodicJob("report", needs: ["fetch"])],
            records: ["fetch": record], at: ConductorDriver.date(10))
        var reads: [String] = []
        for _ in 0..<2 {
            let needed = driver.outputsOfNeeds(of: periodicJob("report", needs: ["fetch"]).0) {
                runID, jobID in
                reads.append("\(runID)/\(jobID)")
                return ["rows": "7"]
            }
            #expect(needed == ["fetch": ["rows": "7"]])
        }
        #expect(reads == ["earlier/fetch"])
    }

    @Test func aNeedWhoseLatestOccurrenceFailedGivesNoOutputs() {
        var driver = ConductorDriver(periodic: [
            periodicJob("fetch"), periodicJob("report", needs: ["fetch"]),
        ])
        driver.succeed("fetch", at: 0, outputs: ["rows": "12"])
        driver.succeed("report", at: 0)
        driver.advance(to: 60)
        driver.fail("fetch", at: 60)
        let needed = driver.outputsOfNeeds(of: periodicJob("report", needs: ["fetch"]).0) { _, _ in
            ["rows": "stale"]
        }
        #expect(needed.isEmpty)
    }
}

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
    func finished(_ count: Int) -> [RunRecord] {
        (0..<count).map { index in
            RunRecord(
                id: "old-\(index)", state: .succeeded,
                startedAt: ConductorDriver.date(Double(index) - 10_000),
                finishedAt: ConductorDriver.date(Double(index) - 10_000), jobIDs: ["x"], runnerPID: 1)
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
        driver.end("build", AttemptResult(outcome: .interrupted))
        driver.end("tick", in: ConductorDriver.run("tick", 0), AttemptResult(outcome: .interrupted))
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
        driver.end("tick", in: runID, AttemptResult(outcome: .interrupted))
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
