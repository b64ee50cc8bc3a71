import Foundation
import JobRunnerCore
import Testing

/// `jobrunner trigger` (SPEC 5.12) stepped through the conductor: an occurrence now, as the
/// job's `overlap` allows, recorded `manual`, the schedule unmoved.
@Suite struct ConductorTriggerTests {
    /// The requests the last decision deletes.
    func deletedRequests(_ driver: ConductorDriver) -> [UInt64] {
        driver.last.changes.compactMap {
            if case .deleteRequest(OperatorRequest.periodicRequests, let id) = $0 { id } else { nil }
        }
    }

    @Test func aTriggerStartsAnOccurrenceNowRecordedManualWithoutMovingTheSchedule() {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        driver.succeed("tick", at: 0)
        driver.advance(to: 10)
        let before = driver.schedules["tick"]
        driver.send(.periodicRequests([ConductorDriver.trigger("tick", at: 10, id: 7)], finished: [:]))
        #expect(driver.started == ["tick@10"])
        #expect(driver.runs[ConductorDriver.run("tick", 10)]?.manual == true)
        #expect(deletedRequests(driver) == [7], "deleted in the commit that stores its run")
        #expect(driver.schedules["tick"] == before, "the schedule does not move")
        #expect(driver.conductor.nextWakeDate == ConductorDriver.date(60))
        driver.succeed("tick", at: 10)
        driver.advance(to: 60)
        #expect(driver.started == ["tick@60"])
        #expect(driver.runs[ConductorDriver.run("tick", 60)]?.manual == nil, "scheduled, not manual")
    }

    @Test func underSkipATriggerWhileAnOccurrenceRunsIsRefusedAndSaysSo() {
        var driver = ConductorDriver(periodic: [periodicJob("tick", overlap: .skip)])
        driver.advance(to: 10)
        driver.send(.periodicRequests([ConductorDriver.trigger("tick", at: 10)], finished: [:]))
        #expect(driver.started.isEmpty)
        #expect(
            driver.last.answers.map(\.result) == [
                .refused("an occurrence of tick still runs (overlap: skip)")
            ])
        #expect(driver.events == ["disabled tick"])
        #expect(driver.runs[ConductorDriver.run("tick", 10)] == nil, "nothing recorded")
        #expect(deletedRequests(driver) == [1])
    }

    @Test func underQueueATriggerWaitsBehindTheRunningOccurrenceAcrossACrash() {
        var driver = ConductorDriver(periodic: [periodicJob("tick", overlap: .queue)])
        driver.advance(to: 10)
        driver.send(.periodicRequests([ConductorDriver.trigger("tick", at: 10)], finished: [:]))
        #expect(driver.started.isEmpty)
        #expect(driver.schedules["tick"]?.queued == ConductorDriver.date(10))
        #expect(driver.schedules["tick"]?.triggered == [ConductorDriver.date(10)])
        // A runner that starts on this record runs it as the manual occurrence it was.
        let restarted = ConductorDriver(
            periodic: [periodicJob("tick", overlap: .queue)], records: driver.schedules,
            at: ConductorDriver.date(11))
        #expect(restarted.started.contains("tick@10"))
        #expect(restarted.runs[ConductorDriver.run("tick", 10)]?.manual == true)
        driver.succeed("tick", at: 0)
        #expect(driver.started == ["tick@10"])
        #expect(driver.runs[ConductorDriver.run("tick", 10)]?.manual == true)
        #expect(driver.schedules["tick"]?.triggered == [])
    }

    @Test func underReplaceATriggerEndsTheRunningOccurrence() {
        var driver = ConductorDriver(periodic: [periodicJob("tick", overlap: .replace)])
        driver.advance(to: 10)
        driver.send(.periodicRequests([ConductorDriver.trigger("tick", at: 10)], finished: [:]))
        #expect(driver.ended == ["tick@0"])
        driver.end("tick", in: ConductorDriver.run("tick", 0), AttemptResult(.interrupted(.runnerStopped)))
        #expect(driver.started == ["tick@10"])
    }

    @Test func aTriggerReadTwiceStartsOneOccurrence() {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        driver.succeed("tick", at: 0)
        driver.send(.periodicRequests([ConductorDriver.trigger("tick", at: 5)], finished: [:]))
        #expect(driver.started == ["tick@5"])
        driver.succeed("tick", at: 5)
        driver.send(.periodicRequests([ConductorDriver.trigger("tick", at: 5)], finished: [:]))
        #expect(driver.started.isEmpty)
        #expect(deletedRequests(driver) == [1], "deleted again, started once")
    }

    @Test func aTriggerStoredWithNoRunnerStartsFirstWhenTheNextRunnerOpens() {
        var record = ScheduleRecord(
            jobID: "tick", anchor: ConductorDriver.date(-120), lastScheduled: ConductorDriver.date(-60),
            schedule: "every 60.0s")
        record.lastResult = .succeeded
        let driver = ConductorDriver(
            periodic: [periodicJob("tick")], records: ["tick": record],
            triggers: [ConductorDriver.trigger("tick", at: -30)])
        #expect(driver.started == ["tick@-30"])
        #expect(driver.runs[ConductorDriver.run("tick", -30)]?.manual == true)
        #expect(
            driver.occurrences(of: "tick").map(\.state) == [.running, .skipped],
            "the due one meets it running")
    }

    @Test func afterAStopATriggerStaysStoredForTheNextRunner() {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        driver.succeed("tick", at: 0)
        driver.send(.stop)
        driver.send(.periodicRequests([ConductorDriver.trigger("tick", at: 5)], finished: [:]))
        #expect(driver.started.isEmpty)
        #expect(deletedRequests(driver).isEmpty)
    }

    @Test func aTriggerOfAJobTheRunnerDoesNotScheduleIsRefused() {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        driver.send(.periodicRequests([ConductorDriver.trigger("gone", at: 5)], finished: [:]))
        #expect(driver.started.isEmpty)
        #expect(
            driver.last.answers.first?.result
                == .refused("gone is not a periodic job of the runner's job files"))
    }
}

/// `retry`, `skip` and `cancel` of a periodic job's occurrence (SPEC 5.12), stored under
/// ``OperatorRequest/periodicRequests`` with the occurrence's run.
@Suite struct ConductorOccurrenceOperatorTests {
    func request(_ kind: OperatorRequest.Kind, _ jobID: String, run runID: String, id: UInt64 = 5)
        -> OperatorRequest
    {
        OperatorRequest(
            id: id, kind: kind, jobID: jobID, requestedAt: ConductorDriver.origin, runID: runID)
    }

    /// What a store holds of a finished occurrence whose job ended `state`.
    func finished(_ driver: ConductorDriver, _ runID: String, job: String, _ state: JobState) throws
        -> RunSnapshot
    {
        let run = try #require(driver.runs[runID])
        var record = JobRecord(jobID: job, pipeline: "default", state: state, attempts: 1)
        record.finishedAt = ConductorDriver.origin
        return RunSnapshot(run: run, jobs: [job: record])
    }

    @Test func cancelOfARunningOccurrenceEndsItsAttempt() {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        let runID = ConductorDriver.run("tick", 0)
        driver.send(.periodicRequests([request(.cancel, "tick", run: runID)], finished: [:]))
        #expect(driver.ended == ["tick@0"])
        driver.end("tick", in: runID, AttemptResult(.interrupted(.runnerStopped)))
        #expect(driver.occurrences(of: "tick").map(\.state) == [.failed])
        #expect(driver.events.contains("cancelled tick"))
    }

    @Test func retryOfAFailedOccurrenceOpensItAgainAndRecordsItsNewResult() throws {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        driver.fail("tick", at: 0)
        let runID = ConductorDriver.run("tick", 0)
        let snapshot = try finished(driver, runID, job: "tick", .failed)
        driver.send(.periodicRequests([request(.retry, "tick", run: runID)], finished: [runID: snapshot]))
        #expect(driver.started == ["tick@0"])
        #expect(driver.occurrences(of: "tick").map(\.state) == [.running])
        // Open again, so not finished (it kept the date of its first end, and read as running
        // with a finishedAt).
        #expect(driver.runs[runID]?.finishedAt == nil)
        #expect(driver.conductor.timetable.isRunning("tick"), "nothing else of the job runs beside it")
        driver.succeed("tick", at: 0)
        #expect(driver.occurrences(of: "tick").map(\.state) == [.succeeded])
        #expect(driver.schedules["tick"]?.lastResult == .succeeded)
        #expect(driver.conductor.nextWakeDate == ConductorDriver.date(60), "the schedule does not move")
    }

    @Test func skipOfAFailedOccurrenceMakesItSkippedAndItsRunSucceeded() throws {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        driver.fail("tick", at: 0)
        let runID = ConductorDriver.run("tick", 0)
        let snapshot = try finished(driver, runID, job: "tick", .failed)
        driver.send(.periodicRequests([request(.skip, "tick", run: runID)], finished: [runID: snapshot]))
        #expect(driver.started.isEmpty)
        #expect(driver.events.contains("skipped tick"))
        #expect(driver.occurrences(of: "tick").map(\.state) == [.succeeded])
        #expect(driver.schedules["tick"]?.lastResult == .succeeded)
    }

    @Test func retryOfASucceededOccurrenceIsRefusedAndLeavesItClosed() throws {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        driver.succeed("tick", at: 0)
        let runID = ConductorDriver.run("tick", 0)
        let snapshot = try finished(driver, runID, job: "tick", .succeeded)
        driver.send(.periodicRequests([request(.retry, "tick", run: runID)], finished: [runID: snapshot]))
        #expect(driver.started.isEmpty)
        #expect(driver.last.changes.allSatisfy { if case .deleteRequest = $0 { true } else { false } })
        guard case .refused = driver.last.answers.first?.result else {
            Issue.record("not refused: \(driver.last.answers)")
            return
        }
    }

    @Test func retryOfAnOldOccurrenceWhileANewerOneRunsIsRefused() throws {
        var driver = ConductorDriver(periodic: [periodicJob("tick")])
        driver.fail("tick", at: 0)
        let runID = ConductorDriver.run("tick", 0)
        let snapshot = try finished(driver, runID, job: "tick", .failed)
        driver.advance(to: 60)
        #expect(driver.started == ["tick@60"])
        driver.send(.periodicRequests([request(.retry, "tick", run: runID)], finished: [runID: snapshot]))
        #expect(driver.started.isEmpty)
        #expect(
            driver.last.answers.first?.result
                == .refused("an occurrence of tick is under way; retry --run \(runID) once it has ended"))
    }
}

/// Retention per periodic job (SPEC 5.12): the runs of one-shot jobs and each periodic job's
/// occurrences are counted apart; a job's own `retention:` keeps its own number.
@Suite struct ConductorRetentionPerJobTests {
    /// The issue's case: with `retention: { runs: 40 }` counting every run together, an `every:
    /// 5s` job pruned a daily job's history within minutes.
    @Test func aFrequentJobNeverPrunesAnotherJobsOccurrences() {
        var driver = ConductorDriver(
            periodic: [periodicJob("fast", every: 5), periodicJob("daily", every: 86_400)],
            retention: RetentionPolicy(runs: 3))
        driver.succeed("daily", at: 0)
        for step in 0..<20 {
            driver.succeed("fast", at: TimeInterval(step * 5))
            driver.advance(to: TimeInterval((step + 1) * 5))
        }
        #expect(driver.occurrences(of: "daily").map(\.state) == [.succeeded], "kept: its own count")
        let fast = driver.occurrences(of: "fast").filter { $0.state == .succeeded }
        #expect(
            fast.count <= 3 + 1, "at most the limit, and those closed since the last pruning: \(fast.count)")
    }

    @Test func aJobsOwnRetentionKeepsItsOwnNumber() {
        var (definition, entry) = periodicJob("fast", every: 5)
        definition.retention = RetentionPolicy(runs: 1)
        var driver = ConductorDriver(
            periodic: [(definition, entry), periodicJob("other", every: 5)],
            retention: RetentionPolicy(runs: 10))
        for step in 0..<12 {
            driver.succeed("fast", at: TimeInterval(step * 5))
            driver.succeed("other", at: TimeInterval(step * 5))
            driver.advance(to: TimeInterval((step + 1) * 5))
        }
        #expect(driver.occurrences(of: "fast").filter { $0.state == .succeeded }.count == 1)
        #expect(driver.occurrences(of: "other").filter { $0.state == .succeeded }.count == 10)
    }

    /// A job's own, smaller `retention:` is pruned in batches of its own size: with the file's
    /// 100 (a batch of 10), a job that keeps 2 used to hold 8 within its first minute.
    @Test func aJobsOwnSmallRetentionIsPrunedInBatchesOfItsSize() {
        var (definition, entry) = periodicJob("fast", every: 5)
        definition.retention = RetentionPolicy(runs: 2)
        var driver = ConductorDriver(periodic: [(definition, entry)], retention: RetentionPolicy(runs: 100))
        for step in 0..<8 {
            driver.succeed("fast", at: TimeInterval(step * 5))
            driver.advance(to: TimeInterval((step + 1) * 5))
        }
        let kept = driver.occurrences(of: "fast").filter { $0.state == .succeeded }.count
        #expect(kept <= 2, "kept \(kept) of a job that keeps 2")
    }
}
