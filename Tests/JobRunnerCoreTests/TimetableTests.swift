import Foundation
import JobRunnerCore
import Testing

/// `every: N s` for the timetable's tests: anchor + k × N.
struct EverySeconds: FireSchedule {
    let seconds: TimeInterval
    func nextFireDate(after date: Date, anchor: Date) -> Date? {
        let periods = (date.timeIntervalSince(anchor) / seconds).rounded(.down) + 1
        return anchor.addingTimeInterval(max(1, periods) * seconds)
    }
}

/// Drives a ``Timetable`` on a hand-moved date.
struct TimetableDriver {
    var timetable: Timetable
    var now = Date(timeIntervalSince1970: 1_800_000_000)
    var last = Timetable.Decision()
    /// The schedule records as a store holds them: each decision's, in order.
    var stored: [String: ScheduleRecord] = [:]

    init(_ jobs: [Timetable.Job], records: [String: ScheduleRecord] = [:]) {
        timetable = Timetable(jobs: jobs, records: records)
    }

    mutating func tick(at offset: TimeInterval) {
        now = Date(timeIntervalSince1970: 1_800_000_000 + offset)
        last = timetable.tick(now: now)
        store(last)
    }

    private mutating func store(_ decision: Timetable.Decision) {
        for record in decision.records { stored[record.jobID] = record }
    }

    mutating func end(_ jobID: String, scheduledAt offset: TimeInterval) {
        last = timetable.ended(Occurrence(jobID: jobID, scheduledAt: date(offset)))
        store(last)
    }

    /// The runner dies: a new timetable starts from what was stored, at the same date.
    func restarted(_ jobs: [Timetable.Job]) -> TimetableDriver {
        var driver = TimetableDriver(jobs, records: stored)
        driver.now = now
        driver.stored = stored
        return driver
    }

    func date(_ offset: TimeInterval) -> Date { Date(timeIntervalSince1970: 1_800_000_000 + offset) }
    var started: [TimeInterval] { last.starts.map { $0.scheduledAt.timeIntervalSince1970 - 1_800_000_000 } }
    var skipped: [TimeInterval] { last.skipped.map { $0.scheduledAt.timeIntervalSince1970 - 1_800_000_000 } }
    var missed: [TimeInterval] { last.missed.map { $0.scheduledAt.timeIntervalSince1970 - 1_800_000_000 } }
}

func everyMinute(
    _ id: String = "refresh", catchUp: CatchUp = .latest, overlap: Overlap = .skip,
    seconds: Double = 60
) -> Timetable.Job {
    Timetable.Job(
        id: id, schedule: EverySeconds(seconds: seconds), scheduleText: "every \(seconds)s", catchUp: catchUp,
        overlap: overlap)
}

@Suite struct TimetableTests {
    @Test func theFirstOccurrenceIsDueWhenTheJobIsFirstSeen() {
        var driver = TimetableDriver([everyMinute()])
        #expect(driver.timetable.nextWakeDate == Date.distantPast)
        driver.tick(at: 0)
        #expect(driver.started == [0])
        #expect(driver.last.records.first?.anchor == driver.date(0))
        #expect(driver.timetable.nextWakeDate == driver.date(60))
    }

    @Test func everyCountsFromTheAnchorNotFromWhenItRan() {
        var driver = TimetableDriver([everyMinute()])
        driver.tick(at: 0)
        driver.end("refresh", scheduledAt: 0)
        driver.tick(at: 59)
        #expect(driver.started.isEmpty)
        driver.tick(at: 61.5)
        #expect(driver.started == [60], "scheduled at 60 whatever the tick's lateness")
        #expect(driver.timetable.nextWakeDate == driver.date(120))
    }

    @Test func overlapSkipRecordsTheOccurrenceThatCameDueWhileTheLastRan() {
        var driver = TimetableDriver([everyMinute(overlap: .skip)])
        driver.tick(at: 0)
        driver.tick(at: 60)
        #expect(driver.started.isEmpty)
        #expect(driver.skipped == [60])
        driver.end("refresh", scheduledAt: 0)
        #expect(driver.started.isEmpty, "a skipped occurrence does not come back")
    }

    @Test func overlapQueueKeepsOneWaiting() {
        var driver = TimetableDriver([everyMinute(overlap: .queue)])
        driver.tick(at: 0)
        driver.tick(at: 60)
        #expect(driver.started.isEmpty && driver.skipped.isEmpty)
        driver.tick(at: 120)
        #expect(driver.skipped == [60], "at most one waits: the newer takes its place")
        driver.end("refresh", scheduledAt: 0)
        #expect(driver.started == [120])
    }

    @Test func overlapReplaceEndsTheRunningOneAndStartsTheNewOneAfter() {
        var driver = TimetableDriver([everyMinute(overlap: .replace)])
        driver.tick(at: 0)
        driver.tick(at: 60)
        #expect(driver.last.replaced == [Occurrence(jobID: "refresh", scheduledAt: driver.date(0))])
        #expect(driver.started.isEmpty, "never two at once")
        driver.end("refresh", scheduledAt: 0)
        #expect(driver.started == [60])
    }

    @Test func aNewerOccurrenceNeverStartsWhileAnEarlierRuns() {
        var driver = TimetableDriver([everyMinute(overlap: .queue)])
        driver.tick(at: 0)
        for minute in 1...5 {
            driver.tick(at: Double(minute) * 60)
            #expect(driver.started.isEmpty)
        }
        #expect(driver.timetable.isRunning("refresh"))
    }

    /// A job every 5 minutes whose runner was down from just after 0 to 1000 s: 300, 600 and 900
    /// were missed (900 is 100 s old: late, not on time).
    func afterDowntime(_ catchUp: CatchUp) -> TimetableDriver {
        let record = ScheduleRecord(
            jobID: "refresh", anchor: Date(timeIntervalSince1970: 1_800_000_000),
            lastScheduled: Date(timeIntervalSince1970: 1_800_000_000), schedule: "every 300.0s")
        var driver = TimetableDriver(
            [everyMinute(catchUp: catchUp, overlap: .queue, seconds: 300)], records: ["refresh": record])
        driver.tick(at: 1000)
        return driver
    }

    @Test func catchUpNoneDropsWhatWasMissed() {
        let driver = afterDowntime(.none)
        #expect(driver.started.isEmpty)
        #expect(driver.missed == [300, 600, 900])
        #expect(driver.timetable.nextWakeDate == driver.date(1200))
    }

    @Test func catchUpLatestRunsOnlyTheLatestMissed() {
        let driver = afterDowntime(.latest)
        #expect(driver.started == [900])
        #expect(driver.missed == [300, 600])
    }

    @Test func catchUpAllRunsEachOneAfterAnother() {
        var driver = afterDowntime(.all)
        #expect(driver.started == [300], "one at a time: the rest wait behind it")
        #expect(driver.missed.isEmpty)
        driver.end("refresh", scheduledAt: 300)
        #expect(driver.started == [600])
        driver.end("refresh", scheduledAt: 600)
        #expect(driver.started == [900])
    }

    @Test func anOccurrenceFoundSoonAfterItsDateIsOnTimeEvenWithCatchUpNone() {
        var driver = TimetableDriver([everyMinute(catchUp: .none)])
        driver.tick(at: 0)
        driver.end("refresh", scheduledAt: 0)
        // Just before the next date: found `lateness` late, and on time.
        driver.tick(at: 60 + Timetable.lateness - 1)
        #expect(driver.started == [60])
    }

    @Test func catchUpNoneRunsOnlyTheLatestOfTheDatesOnTime() {
        var driver = TimetableDriver([everyMinute(catchUp: .none, seconds: 10)])
        driver.tick(at: 0)
        driver.end("refresh", scheduledAt: 0)
        driver.tick(at: 55)
        #expect(driver.started == [50], "the latest date runs")
        #expect(driver.missed == [10, 20, 30, 40], "the others are missed, not skipped as overlapping")
    }

    @Test func catchUpAllIsBoundedAndTheRestAreMissed() {
        let record = ScheduleRecord(
            jobID: "j", anchor: Date(timeIntervalSince1970: 1_800_000_000),
            lastScheduled: Date(timeIntervalSince1970: 1_800_000_000), schedule: "every 1.0s")
        var driver = TimetableDriver(
            [everyMinute("j", catchUp: .all, overlap: .skip, seconds: 1)], records: ["j": record])
        driver.tick(at: 500)
        let decided = driver.last.starts.count + driver.last.skipped.count
        #expect(decided <= Timetable.catchUpLimit + 1)
        #expect(
            driver.last.records.first?.lastScheduled == driver.date(500), "nothing before 500 comes again")
    }

    @Test func aRestartNeitherRepeatsNorLosesAnOccurrence() {
        var first = TimetableDriver([everyMinute()])
        first.tick(at: 0)
        first.end("refresh", scheduledAt: 0)
        first.tick(at: 60)
        let stored = first.last.records.reduce(into: [String: ScheduleRecord]()) { $0[$1.jobID] = $1 }
        // The runner dies here; the next one starts from what was stored.
        var second = TimetableDriver([everyMinute()], records: stored)
        second.tick(at: 61)
        #expect(second.started.isEmpty, "60 was started before the crash")
        second.tick(at: 120)
        #expect(second.started == [120])
    }

    @Test func reloadAddsRemovesAndReschedules() {
        var driver = TimetableDriver([everyMinute("a"), everyMinute("b")])
        driver.tick(at: 0)
        driver.end("a", scheduledAt: 0)
        driver.end("b", scheduledAt: 0)
        driver.timetable.reload([everyMinute("a", seconds: 300), everyMinute("c")])
        driver.tick(at: 30)
        #expect(driver.last.starts.map(\.jobID) == ["c"], "c is new; a changed waits for its new date")
        driver.tick(at: 60)
        #expect(driver.last.starts.isEmpty, "b was removed; a now fires every 300 s from 30")
        driver.tick(at: 330)
        #expect(driver.last.starts.map(\.jobID) == ["a"])
    }
}
