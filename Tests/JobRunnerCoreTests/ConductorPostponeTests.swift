import Foundation
import JobRunnerCore
import Testing

/// At most `maxOccurrenceRuns` occurrence runs under way: 10,000 periodic jobs falling due
/// together made 10,000 schedulers and attempt tasks at once (a `serve` peaked at 180 MiB); the
/// occurrences beyond the limit wait in the order they fell due, listed as waiting in their
/// schedule records, and start as runs close.
@Suite struct ConductorPostponeTests {
    private static let jobs = (0..<5).map { periodicJob("t\($0)", every: 3600) }

    @Test func occurrencesBeyondTheLimitWaitListedInTheirRecords() {
        let driver = ConductorDriver(periodic: Self.jobs, maxOccurrenceRuns: 2)
        #expect(driver.started == ["t0@0", "t1@0"])
        #expect(driver.conductor.postponed.map(\.jobID) == ["t2", "t3", "t4"])
        // A crash now loses none of them: their records say they wait.
        for id in ["t2", "t3", "t4"] {
            #expect(driver.schedules[id]?.waiting == [ConductorDriver.date(0)], "\(id)")
        }
        #expect(driver.schedules["t0"]?.waiting == [])
    }

    @Test func eachStartsInTurnAsARunCloses() {
        var driver = ConductorDriver(periodic: Self.jobs, maxOccurrenceRuns: 2)
        driver.succeed("t1", at: 0)
        #expect(driver.started == ["t2@0"])
        #expect(driver.schedules["t2"]?.waiting == [], "no longer waiting once it has a run")
        driver.fail("t0", at: 0)
        #expect(driver.started == ["t3@0"])
        driver.succeed("t2", at: 0)
        #expect(driver.started == ["t4@0"])
        #expect(driver.conductor.postponed.isEmpty)
        #expect(driver.occurrences(of: "t4").map(\.state) == [.running])
    }

    @Test func aLaterDueOccurrenceQueuesBehindThoseAlreadyPostponed() {
        let jobs = [
            periodicJob("a", every: 3600), periodicJob("b", every: 3600), periodicJob("fast", every: 10),
        ]
        var driver = ConductorDriver(periodic: jobs, maxOccurrenceRuns: 1)
        #expect(driver.started == ["a@0"])
        #expect(driver.conductor.postponed.map(\.jobID) == ["b", "fast"])
        driver.succeed("a", at: 0)
        #expect(driver.started == ["b@0"], "first come, first started")
    }

    @Test func runIsSettledOnlyOnceThePostponedHaveRun() {
        var driver = ConductorDriver(periodic: Self.jobs, serve: false, maxOccurrenceRuns: 2)
        driver.succeed("t0", at: 0)
        driver.succeed("t1", at: 0)
        driver.succeed("t2", at: 0)
        driver.succeed("t3", at: 0)
        #expect(!driver.conductor.isSettled, "t4 has not run")
        driver.succeed("t4", at: 0)
        #expect(driver.conductor.isSettled)
        #expect(Self.jobs.allSatisfy { driver.occurrences(of: $0.0.id).map(\.state) == [.succeeded] })
    }

    @Test func aStopLeavesThePostponedToTheNextRunnerWithoutARunEach() {
        var driver = ConductorDriver(periodic: Self.jobs, maxOccurrenceRuns: 2)
        driver.send(.stop)
        #expect(driver.conductor.postponed.isEmpty)
        #expect(driver.occurrences(of: "t3").isEmpty, "no run made for it at the stop")
        // The next runner reads the records and starts them.
        var next = ConductorDriver(
            periodic: Self.jobs, records: driver.schedules, maxOccurrenceRuns: 10,
            at: ConductorDriver.date(5))
        #expect(Set(next.started) == ["t2@0", "t3@0", "t4@0"])
        next.succeed("t3", at: 0)
        #expect(next.occurrences(of: "t3").map(\.state) == [.succeeded])
    }

    @Test func aReloadThatRemovesAJobDropsItsPostponedOccurrence() {
        var driver = ConductorDriver(periodic: Self.jobs, maxOccurrenceRuns: 2)
        let kept = Self.jobs.filter { $0.0.id != "t3" }
        driver.send(.reload(Workload(jobs: kept.map(\.0), pipelines: []), kept.map(\.1)))
        #expect(driver.conductor.postponed.map(\.jobID) == ["t2", "t4"])
        driver.succeed("t0", at: 0)
        #expect(driver.started == ["t2@0"])
        driver.succeed("t1", at: 0)
        #expect(driver.started == ["t4@0"])
        #expect(driver.occurrences(of: "t3").isEmpty)
    }

    @Test func withoutALimitEveryDueOccurrenceStartsAtOnce() {
        let driver = ConductorDriver(periodic: Self.jobs)
        // Each has its run at once (the fifth waits for a slot of the pipeline, inside its run).
        #expect(Self.jobs.allSatisfy { driver.occurrences(of: $0.0.id).map(\.state) == [.running] })
        #expect(driver.conductor.postponed.isEmpty)
    }
}
