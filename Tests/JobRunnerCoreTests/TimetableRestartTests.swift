import Foundation
import JobRunnerCore
import Testing

/// A runner killed at any moment (SPEC 1, 5.8): the next one starts from the stored schedule
/// records and neither loses nor repeats an occurrence that was decided but had no run yet.
@Suite struct TimetableRestartTests {
    /// Every 5 minutes, `catchUp: all`, the runner down from just after 0 to 1000 s: 300, 600
    /// and 900 are run one after another.
    static let catchingUp = [everyMinute(catchUp: .all, seconds: 300)]

    func afterDowntime() -> TimetableDriver {
        let record = ScheduleRecord(
            jobID: "refresh", anchor: Date(timeIntervalSince1970: 1_800_000_000),
            lastScheduled: Date(timeIntervalSince1970: 1_800_000_000), schedule: "every 300.0s")
        var driver = TimetableDriver(Self.catchingUp, records: ["refresh": record])
        driver.tick(at: 1000)
        return driver
    }

    @Test func aCatchUpBacklogSurvivesACrashWhileItsFirstRuns() {
        let first = afterDowntime()
        #expect(first.started == [300])
        #expect(first.stored["refresh"]?.lastScheduled == first.date(900))
        // Killed while 300 runs: the next runner resumes it, then runs the rest.
        var second = first.restarted(Self.catchingUp)
        second.timetable.resumed(Occurrence(jobID: "refresh", scheduledAt: first.date(300)))
        second.tick(at: 1001)
        #expect(second.started.isEmpty, "300 runs again (resumed): nothing beside it")
        second.end("refresh", scheduledAt: 300)
        #expect(second.started == [600])
        second.end("refresh", scheduledAt: 600)
        #expect(second.started == [900])
        second.end("refresh", scheduledAt: 900)
        #expect(second.started.isEmpty, "none twice")
    }

    /// Restarts after downtime while one occurrence runs add their backlogs to the stored one:
    /// it keeps the newest `catchUpLimit` dates, and the older are recorded missed (it grew by
    /// 99 dates per restart).
    @Test func aBacklogAddedToAfterRestartsKeepsTheNewestHundred() {
        let jobs = [everyMinute(catchUp: .all, seconds: 60)]
        let record = ScheduleRecord(
            jobID: "refresh", anchor: Date(timeIntervalSince1970: 1_800_000_000),
            lastScheduled: Date(timeIntervalSince1970: 1_800_000_000), schedule: "every 60.0s")
        var driver = TimetableDriver(jobs, records: ["refresh": record])
        driver.tick(at: 60 * 100)
        let running: TimeInterval? = driver.started.first
        #expect(running != nil, "the first caught-up date runs")
        for round in 1...3 {
            var next = driver.restarted(jobs)
            if let running {
                next.timetable.resumed(Occurrence(jobID: "refresh", scheduledAt: driver.date(running)))
            }
            next.tick(at: TimeInterval(60 * 100 * (round + 1)))
            let waiting = next.stored["refresh"]?.backlog.count ?? 0
            #expect(waiting <= Timetable.catchUpLimit, "round \(round): \(waiting) dates wait")
            if round > 1 { #expect(!next.missed.isEmpty, "round \(round): the oldest are recorded missed") }
            driver = next
        }
    }

    @Test func aCatchUpBacklogSurvivesACrashAfterItsSecondStarted() {
        var first = afterDowntime()
        first.end("refresh", scheduledAt: 300)
        #expect(first.started == [600])
        var second = first.restarted(Self.catchingUp)
        second.timetable.resumed(Occurrence(jobID: "refresh", scheduledAt: first.date(600)))
        second.tick(at: 1001)
        #expect(second.started.isEmpty)
        second.end("refresh", scheduledAt: 600)
        #expect(second.started == [900], "600 had its run before the crash; 900 waited")
        second.end("refresh", scheduledAt: 900)
        #expect(second.started.isEmpty)
    }

    @Test func aQueuedOccurrenceSurvivesACrash() {
        let jobs = [everyMinute(overlap: .queue)]
        var first = TimetableDriver(jobs)
        first.tick(at: 0)
        first.tick(at: 60)
        #expect(first.started.isEmpty, "60 waits behind 0")
        var second = first.restarted(jobs)
        second.timetable.resumed(Occurrence(jobID: "refresh", scheduledAt: first.date(0)))
        second.tick(at: 61)
        #expect(second.started.isEmpty && second.skipped.isEmpty)
        second.end("refresh", scheduledAt: 0)
        #expect(second.started == [60])
    }

    @Test func aRestoredQueuedOccurrenceGivesWayToANewerOneAsBefore() {
        let jobs = [everyMinute(overlap: .queue)]
        var first = TimetableDriver(jobs)
        first.tick(at: 0)
        first.tick(at: 60)
        var second = first.restarted(jobs)
        second.timetable.resumed(Occurrence(jobID: "refresh", scheduledAt: first.date(0)))
        second.tick(at: 120)
        #expect(second.skipped == [60], "at most one waits, across a restart too")
        second.end("refresh", scheduledAt: 0)
        #expect(second.started == [120])
    }
}
