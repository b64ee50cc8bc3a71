import Foundation
import JobRunnerCore
import Testing

/// What a schedule record lists as waiting: occurrences decided to run that have no run yet.
@Suite struct TimetableWaitingTests {
    func afterDowntime() -> TimetableDriver {
        TimetableRestartTests().afterDowntime()
    }

    @Test func whatWaitsStartsAtOnceWhenNothingOfItsJobIsLeftRunning() {
        var first = afterDowntime()
        let held = Occurrence(jobID: "refresh", scheduledAt: first.date(300))
        // The runner holds 300 for its needs: no run yet, so it stays listed as waiting.
        if let record = first.timetable.hold(held) { first.stored["refresh"] = record }
        #expect(first.stored["refresh"]?.backlog == [first.date(300), first.date(600), first.date(900)])
        var second = first.restarted(TimetableRestartTests.catchingUp)
        second.tick(at: 1001)
        #expect(second.started == [300])
        #expect(second.stored["refresh"]?.backlog == [second.date(600), second.date(900)])
    }

    @Test func aHeldOccurrenceLeavesTheWaitingListWithItsRun() {
        var driver = afterDowntime()
        let held = Occurrence(jobID: "refresh", scheduledAt: driver.date(300))
        _ = driver.timetable.hold(held)
        let record = driver.timetable.release(held)
        #expect(record?.backlog == [driver.date(600), driver.date(900)])
        #expect(driver.timetable.release(held) == nil, "released once")
    }

    @Test func aRemovedJobsWaitingOccurrencesAreDropped() {
        var driver = afterDowntime()
        driver.timetable.reload([])
        driver.tick(at: 1001)
        #expect(driver.stored["refresh"]?.backlog == [])
    }

    /// A held occurrence has no run, so nothing ends it: a reload that removes its job must,
    /// or the job, loaded again, counts as running and every occurrence of it is skipped.
    @Test func aJobRemovedWhileItsOccurrenceIsHeldRunsAgainOnceLoadedBack() {
        var driver = TimetableDriver([everyMinute("refresh")])
        driver.tick(at: 0)
        #expect(driver.started == [0])
        _ = driver.timetable.hold(Occurrence(jobID: "refresh", scheduledAt: driver.date(0)))
        driver.timetable.reload([])
        #expect(!driver.timetable.isRunning("refresh"))
        driver.timetable.reload([everyMinute("refresh")])
        driver.tick(at: 60)
        #expect(driver.started == [60])
        #expect(driver.skipped.isEmpty)
    }

    @Test func aRecordStoredBeforeWaitingDatesExistedStillReads() throws {
        let old = #"{"jobID":"j","anchor":0,"lastScheduled":60,"schedule":"every 60.0s"}"#
        let record = try JSONDecoder().decode(ScheduleRecord.self, from: Data(old.utf8))
        #expect(record.backlog.isEmpty && record.queued == nil)
        #expect(record.lastScheduled == Date(timeIntervalSinceReferenceDate: 60))
    }
}
