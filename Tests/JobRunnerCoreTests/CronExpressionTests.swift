import Foundation
import JobRunnerCore
import Testing

/// `2026-03-29T01:00:00Z` as a date.
func utc(_ text: String) throws -> Date {
    try Date(text, strategy: .iso8601)
}

/// The next `count` dates of `cron` in `zone` after `start`, as UTC ISO text.
func fires(_ cron: String, in zone: String = "UTC", after start: String, count: Int = 3) throws -> [String] {
    let expression = try CronExpression(cron)
    let timeZone = try #require(TimeZone(identifier: zone))
    let start = try utc(start)
    return Schedule.cron(expression, timeZone: timeZone).nextFireDates(
        after: start, anchor: start, count: count
    )
    .map { $0.formatted(.iso8601) }
}

@Suite struct CronFieldTests {
    // 2026-05-13 is a Wednesday.
    static let wednesday = "2026-05-13T08:41:27Z"

    @Test func everyMinuteStartsAtTheNextWholeMinute() throws {
        #expect(
            try fires("* * * * *", after: "2026-05-13T10:15:30Z")
                == ["2026-05-13T10:16:00Z", "2026-05-13T10:17:00Z", "2026-05-13T10:18:00Z"])
    }

    @Test func aFireDateIsStrictlyAfterTheStart() throws {
        #expect(try fires("16 10 * * *", after: "2026-05-13T10:16:00Z", count: 1) == ["2026-05-14T10:16:00Z"])
        #expect(try fires("16 10 * * *", after: "2026-05-13T10:15:59Z", count: 1) == ["2026-05-13T10:16:00Z"])
    }

    @Test func minuteValuesListsRangesAndSteps() throws {
        #expect(
            try fires("5,20 * * * *", after: Self.wednesday)
                == ["2026-05-13T09:05:00Z", "2026-05-13T09:20:00Z", "2026-05-13T10:05:00Z"])
        #expect(
            try fires("50-52 * * * *", after: Self.wednesday)
                == ["2026-05-13T08:50:00Z", "2026-05-13T08:51:00Z", "2026-05-13T08:52:00Z"])
        #expect(
            try fires("*/20 * * * *", after: Self.wednesday)
                == ["2026-05-13T09:00:00Z", "2026-05-13T09:20:00Z", "2026-05-13T09:40:00Z"])
        #expect(
            try fires("10-40/15 * * * *", after: Self.wednesday)
                == ["2026-05-13T09:10:00Z", "2026-05-13T09:25:00Z", "2026-05-13T09:40:00Z"])
        // `a/n` is `a-59/n`.
        #expect(
            try fires("50/4 * * * *", after: Self.wednesday)
                == ["2026-05-13T08:50:00Z", "2026-05-13T08:54:00Z", "2026-05-13T08:58:00Z"])
    }

    @Test func hours() throws {
        #expect(
            try fires("0 9-17/4 * * *", after: Self.wednesday)
                == ["2026-05-13T09:00:00Z", "2026-05-13T13:00:00Z", "2026-05-13T17:00:00Z"])
        #expect(
            try fires("30 23 * * *", after: Self.wednesday, count: 2)
                == ["2026-05-13T23:30:00Z", "2026-05-14T23:30:00Z"])
    }

    @Test func daysOfMonthSkipMonthsThatLackThem() throws {
        #expect(
            try fires("0 0 31 * *", after: Self.wednesday)
                == ["2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z"])
        #expect(
            try fires("0 6 1,15 * *", after: Self.wednesday)
                == ["2026-05-15T06:00:00Z", "2026-06-01T06:00:00Z", "2026-06-15T06:00:00Z"])
    }

    @Test func monthsByNumberAndByNameInAnyCase() throws {
        let expected = ["2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z", "2027-03-01T00:00:00Z"]
        for text in ["0 0 1 1-3 *", "0 0 1 jan-mar *", "0 0 1 JAN,Feb,mar *", "0 0 1 */1 *"] {
            #expect(try fires(text, after: "2026-12-15T00:00:00Z") == expected, "\(text)")
        }
        #expect(
            try fires("0 0 1 dec *", after: Self.wednesday, count: 2) == [
                "2026-12-01T00:00:00Z", "2027-12-01T00:00:00Z",
            ])
    }

    @Test func weekdaysByNumberAndNameWithSundayAsZeroAndSeven() throws {
        // 2026-05-17 is a Sunday.
        for text in ["0 0 * * 0", "0 0 * * 7", "0 0 * * sun", "0 0 * * SUN", "0 0 * * Sun"] {
            #expect(
                try fires(text, after: Self.wednesday)
                    == ["2026-05-17T00:00:00Z", "2026-05-24T00:00:00Z", "2026-05-31T00:00:00Z"], "\(text)")
        }
        #expect(
            try fires("0 8 * * mon-fri", after: "2026-05-15T12:00:00Z")
                == ["2026-05-18T08:00:00Z", "2026-05-19T08:00:00Z", "2026-05-20T08:00:00Z"])
        // 5-7 runs through Sunday.
        #expect(
            try fires("0 0 * * 5-7", after: Self.wednesday)
                == ["2026-05-15T00:00:00Z", "2026-05-16T00:00:00Z", "2026-05-17T00:00:00Z"])
    }

    @Test func macrosAreTheirFiveFields() throws {
        let pairs = [
            ("@hourly", "0 * * * *"), ("@daily", "0 0 * * *"), ("@midnight", "0 0 * * *"),
            ("@weekly", "0 0 * * 0"), ("@monthly", "0 0 1 * *"), ("@yearly", "0 0 1 1 *"),
            ("@annually", "0 0 1 1 *"), ("@DAILY", "0 0 * * *"),
        ]
        for (macro, fields) in pairs {
            #expect(
                try fires(macro, after: Self.wednesday, count: 4)
                    == fires(fields, after: Self.wednesday, count: 4),
                "\(macro)")
        }
        #expect(try CronExpression("@daily").description == "@daily")
    }

    @Test func bothDayFieldsRestrictedMeansEither() throws {
        // The 1st or any Monday (2026-05-18, 05-25 are Mondays; 06-01 is both).
        #expect(
            try fires("0 12 1 * mon", after: Self.wednesday, count: 4)
                == [
                    "2026-05-18T12:00:00Z", "2026-05-25T12:00:00Z", "2026-06-01T12:00:00Z",
                    "2026-06-08T12:00:00Z",
                ])
    }

    @Test func aDayFieldStartingWithAStarMeansBoth() throws {
        // crontab(5): `*/2` is not "restricted", so odd days that are also Mondays.
        #expect(
            try fires("0 0 */2 * mon", after: Self.wednesday)
                == ["2026-05-25T00:00:00Z", "2026-06-01T00:00:00Z", "2026-06-15T00:00:00Z"])
        // Only one field restricted: that one decides.
        #expect(try fires("0 0 13 * *", after: Self.wednesday, count: 1) == ["2026-06-13T00:00:00Z"])
        #expect(try fires("0 0 * * wed", after: Self.wednesday, count: 1) == ["2026-05-20T00:00:00Z"])
    }

    @Test func leapDayFiresInLeapYearsOnly() throws {
        #expect(
            try fires("0 0 29 2 *", after: "2026-01-01T00:00:00Z")
                == ["2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z", "2036-02-29T00:00:00Z"])
        // 2100 is not a leap year.
        #expect(try fires("0 0 29 2 *", after: "2096-03-01T00:00:00Z", count: 1) == ["2104-02-29T00:00:00Z"])
        // A leap day that is also a Sunday: 28 years apart, 40 across 2100.
        #expect(
            try fires("0 0 29 2 */7", after: "2026-01-01T00:00:00Z", count: 4)
                == [
                    "2032-02-29T00:00:00Z", "2060-02-29T00:00:00Z", "2088-02-29T00:00:00Z",
                    "2128-02-29T00:00:00Z",
                ])
    }

    @Test func aDayThatNoMonthHasIsFineWhenTheWeekdayFieldCanMatch() throws {
        // Either field matches: Mondays of February.
        #expect(
            try fires("0 0 30 2 mon", after: "2026-01-01T00:00:00Z")
                == ["2026-02-02T00:00:00Z", "2026-02-09T00:00:00Z", "2026-02-16T00:00:00Z"])
    }

    @Test func timeZonesWithoutDaylightSaving() throws {
        // Kolkata is +05:30 all year; Chatham +12:45 in its winter.
        #expect(
            try fires("0 9 * * *", in: "Asia/Kolkata", after: Self.wednesday, count: 2)
                == ["2026-05-14T03:30:00Z", "2026-05-15T03:30:00Z"])
        #expect(
            try fires("0 0 * * *", in: "Pacific/Chatham", after: Self.wednesday, count: 1)
                == ["2026-05-13T11:15:00Z"])
    }
}

@Suite struct CronDaylightSavingTests {
    // Europe/Berlin 2026: 02:00 CET becomes 03:00 CEST on March 29 (01:00Z); 03:00 CEST becomes
    // 02:00 CET on October 25 (01:00Z). America/New_York 2026: 02:00 EST becomes 03:00 EDT on
    // March 8 (07:00Z); 02:00 EDT becomes 01:00 EST on November 1 (06:00Z).

    @Test func berlinSkippedTimeFiresAtTheEndOfTheGap() throws {
        #expect(
            try fires("30 2 * * *", in: "Europe/Berlin", after: "2026-03-28T12:00:00Z")
                == ["2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"])
    }

    @Test func berlinSeveralSkippedTimesFireOnceAndOnceWithTheMinuteAfterTheGap() throws {
        #expect(
            try fires("*/15 2 * * *", in: "Europe/Berlin", after: "2026-03-29T00:00:00Z")
                == ["2026-03-29T01:00:00Z", "2026-03-30T00:00:00Z", "2026-03-30T00:15:00Z"])
        #expect(
            try fires("0,30 2,3 * * *", in: "Europe/Berlin", after: "2026-03-29T00:00:00Z")
                == ["2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z", "2026-03-30T00:00:00Z"])
    }

    @Test func berlinRepeatedTimeFiresOnceAtItsFirstOccurrence() throws {
        #expect(
            try fires("30 2 * * *", in: "Europe/Berlin", after: "2026-10-24T12:00:00Z")
                == ["2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z", "2026-10-27T01:30:00Z"])
        // From inside the first pass, the second pass does not fire.
        #expect(
            try fires("30 2 * * *", in: "Europe/Berlin", after: "2026-10-25T00:45:00Z", count: 1)
                == ["2026-10-26T01:30:00Z"])
        // Hourly: 02:00 CEST, then 03:00 CET; 02:00 CET (01:00Z) is the repeat.
        #expect(
            try fires("0 * * * *", in: "Europe/Berlin", after: "2026-10-24T23:30:00Z")
                == ["2026-10-25T00:00:00Z", "2026-10-25T02:00:00Z", "2026-10-25T03:00:00Z"])
    }

    @Test func newYorkSkippedTimeFiresAtTheEndOfTheGap() throws {
        #expect(
            try fires("30 2 * * *", in: "America/New_York", after: "2026-03-07T12:00:00Z")
                == ["2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"])
        #expect(
            try fires("0 * * * *", in: "America/New_York", after: "2026-03-08T05:30:00Z")
                == ["2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"])
    }

    @Test func newYorkRepeatedTimeFiresOnce() throws {
        #expect(
            try fires("30 1 * * *", in: "America/New_York", after: "2026-10-31T12:00:00Z", count: 2)
                == ["2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"])
        #expect(
            try fires("*/30 * * * *", in: "America/New_York", after: "2026-11-01T05:15:00Z")
                == ["2026-11-01T05:30:00Z", "2026-11-01T07:00:00Z", "2026-11-01T07:30:00Z"])
        // From inside the second pass (01:10 EST): 01:30 has fired already, in the first pass.
        #expect(
            try fires("*/30 * * * *", in: "America/New_York", after: "2026-11-01T06:10:00Z", count: 1)
                == ["2026-11-01T07:00:00Z"])
    }
}

@Suite struct CronParseErrorTests {
    static func message(_ text: String) -> String? {
        do {
            _ = try CronExpression(text)
            return nil
        } catch {
            return error.description
        }
    }

    @Test(arguments: [
        ("", "cron must not be empty; write five fields, like '*/15 * * * *', or a macro, like @daily"),
        ("   ", "cron must not be empty; write five fields, like '*/15 * * * *', or a macro, like @daily"),
        (
            "* * * *",
            "cron needs 5 fields (minute hour day-of-month month day-of-week), got 4, like '*/15 * * * *'"
        ),
        (
            "0 * * * * *",
            "cron needs 5 fields (minute hour day-of-month month day-of-week), got 6, like '*/15 * * * *'"
        ),
        (
            "@reboot",
            "unknown cron macro '@reboot'; use @hourly, @daily, @midnight, @weekly, @monthly, @yearly or @annually"
        ),
        (
            "@daily 5",
            "unknown cron macro '@daily'; use @hourly, @daily, @midnight, @weekly, @monthly, @yearly or @annually"
        ),
        ("60 * * * *", "cron field 1 (minute) '60' is out of range 0-59"),
        ("0 25 * * *", "cron field 2 (hour) '25' is out of range 0-23"),
        ("0 0 0 * *", "cron field 3 (day of month) '0' is out of range 1-31"),
        ("0 0 32 * *", "cron field 3 (day of month) '32' is out of range 1-31"),
        ("0 0 * 13 *", "cron field 4 (month) '13' is out of range 1-12"),
        ("0 0 * * 8", "cron field 5 (day of week) '8' is out of range 0-7"),
        (
            "0 0 * * 99999999999999999999999",
            "cron field 5 (day of week) '99999999999999999999999' is out of range 0-7"
        ),
        ("0 0 * jna *", "cron field 4 (month): unknown month name 'jna'; use jan-dec or 1-12"),
        (
            "0 0 * * mnd",
            "cron field 5 (day of week): unknown weekday name 'mnd'; use sun-sat or 0-7 (0 and 7 are Sunday)"
        ),
        (
            "0 0 * * monday",
            "cron field 5 (day of week): unknown weekday name 'monday'; use sun-sat or 0-7 (0 and 7 are Sunday)"
        ),
        ("x * * * *", "cron field 1 (minute) 'x' is not a number in 0-59"),
        ("0 mon * * *", "cron field 2 (hour) 'mon' is not a number in 0-23"),
        ("-5 * * * *", "cron field 1 (minute) '-5' is not a number in 0-59"),
        ("? * * * *", "cron field 1 (minute) '?' is not a number in 0-59"),
        ("0 0 L * *", "cron field 3 (day of month) 'L' is not a number in 1-31"),
        ("0 0 * 1x *", "cron field 4 (month) '1x' is not a number in 1-12"),
        ("*/0 * * * *", "cron field 1 (minute): step must be at least 1"),
        ("*/x * * * *", "cron field 1 (minute): step 'x' is not a whole number; write it like */15"),
        ("0 */ * * *", "cron field 2 (hour): step '' is not a whole number; write it like */15"),
        (
            "1,,2 * * * *",
            "cron field 1 (minute) has an empty item; separate values with single commas, like 1,15,30"
        ),
        (
            "0 0 * * 1,",
            "cron field 5 (day of week) has an empty item; separate values with single commas, like 1,15,30"
        ),
        (
            "30-10 * * * *",
            "cron field 1 (minute) range '30-10' goes backwards; write the smaller value first"
        ),
        (
            "0 0 * * sat-sun",
            "cron field 5 (day of week) range 'sat-sun' goes backwards; write the smaller value first (for a range that ends on Sunday, write 7 for it: sat-sun is 6-7)"
        ),
        (
            "0 0 30 2 *",
            "cron never fires: day 30 does not occur in February; check the day of month and month fields"
        ),
        (
            "0 0 31 apr,jun,sep,nov *",
            "cron never fires: day 31 does not occur in April, June, September or November; check the day of month and month fields"
        ),
        (
            "0 0 30,31 2 */1",
            "cron never fires: days 30, 31 do not occur in February; check the day of month and month fields"
        ),
    ])
    func refusesWithAMessageThatNamesTheField(text: String, expected: String) {
        #expect(Self.message(text) == expected)
    }

    @Test func reportsTheFieldAndReasonAsValues() throws {
        #expect(throws: CronParseError(.outOfRange("25"), in: .hour)) { try CronExpression("0 25 * * *") }
        #expect(throws: CronParseError(.fieldCount(4))) { try CronExpression("* * * *") }
    }

    @Test(arguments: [
        "0 0 29 2 *", "0 0 30 2 mon", "* * * * *", "59 23 31 12 7", "0-59/1 0-23 1-31 1-12 0-7",
        "0 0 1-31 * 1",
        "\t*/5  *\t* * *  ",
    ])
    func acceptsValidExpressions(text: String) {
        #expect(Self.message(text) == nil)
    }
}

@Suite struct EveryScheduleTests {
    static let anchor = Date(timeIntervalSince1970: 1_780_000_000.25)
    static let fifteen = Schedule.every(.seconds(900))

    @Test func theAnchorIsTheFirstOccurrence() {
        #expect(
            Self.fifteen.nextFireDate(after: Self.anchor.addingTimeInterval(-3600), anchor: Self.anchor)
                == Self.anchor)
    }

    @Test func firesAtTheAnchorPlusWholeIntervalsStrictlyAfterTheDate() {
        let schedule = Self.fifteen
        let anchor = Self.anchor
        #expect(schedule.nextFireDate(after: anchor, anchor: anchor) == anchor.addingTimeInterval(900))
        #expect(
            schedule.nextFireDate(after: anchor.addingTimeInterval(899.999), anchor: anchor)
                == anchor.addingTimeInterval(900))
        #expect(
            schedule.nextFireDate(after: anchor.addingTimeInterval(900), anchor: anchor)
                == anchor.addingTimeInterval(1800))
    }

    @Test func doesNotDriftWithWhenTheLastOccurrenceRan() {
        // An occurrence that ran late (7 s after its date, 1,000 intervals on) does not move the next.
        let late = Self.anchor.addingTimeInterval(900 * 1000 + 7)
        #expect(
            Self.fifteen.nextFireDate(after: late, anchor: Self.anchor)
                == Self.anchor.addingTimeInterval(900 * 1001))
        #expect(
            Self.fifteen.nextFireDates(
                after: Self.anchor.addingTimeInterval(3600), anchor: Self.anchor, count: 3)
                == [4500, 5400, 6300].map { Self.anchor.addingTimeInterval($0) })
    }

    @Test func countsElapsedTimeAcrossDaylightSavingChanges() throws {
        // Berlin's clocks jump at 01:00Z on 2026-03-29; `every: 1h` does not notice.
        let anchor = try utc("2026-03-29T00:30:00Z")
        #expect(
            Schedule.every(.seconds(3600)).nextFireDates(after: anchor, anchor: anchor, count: 2)
                == [try utc("2026-03-29T01:30:00Z"), try utc("2026-03-29T02:30:00Z")])
    }

    @Test func describesItself() throws {
        #expect(Self.fifteen.description == "every 15m")
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        #expect(
            Schedule.cron(try CronExpression("*/5 * * * *"), timeZone: berlin).description
                == "cron '*/5 * * * *' in Europe/Berlin")
    }

    @Test func jobDefinitionsArePeriodicWithASchedule() {
        var job = JobDefinition(id: "a", handler: .shell("true"))
        #expect(!job.isPeriodic)
        #expect(job.catchUp == .latest)
        #expect(job.overlap == .skip)
        job.schedule = Self.fifteen
        #expect(job.isPeriodic)
    }
}
