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
        driver.end("tick", in: ConductorDriver.run("tick", 0), AttemptResult(.interrupted(.runnerStopped)))
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

    /// The issue's case: `every: 5s`, 75 s down. Before, every date of the last minute was "on
    /// time": the first ran and the other ten were each skipped as overlapping it, printing
    /// `disabled tick: the last occurrence still runs` eleven times.
    @Test func catchUpNoneAfterDowntimeRunsOnlyTheLatestAndReportsTheMissedInOneLine() {
        let driver = ConductorDriver(
            periodic: [periodicJob("tick", every: 5, catchUp: .none)],
            records: record(lastScheduled: 0, every: 5),
            at: ConductorDriver.date(75))
        #expect(driver.started == ["tick@75"])
        let states = driver.occurrences(of: "tick").map(\.state)
        #expect(states == Array(repeating: .missed, count: 14) + [.running])
        #expect(!states.contains(.skipped), "nothing is skipped as overlapping")
        let reports = driver.history.flatMap(\.effects).compactMap { effect -> String? in
            guard case .reportMissed(let job, let count, let catchUp) = effect else { return nil }
            return "\(job) \(count) \(catchUp.rawValue)"
        }
        #expect(reports == ["tick 14 none"])
        #expect(driver.history.flatMap(\.events).allSatisfy { $0.kind != .disabled })
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
