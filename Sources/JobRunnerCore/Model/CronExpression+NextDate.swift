import Foundation

extension CronExpression {
    /// The first date strictly after `date` at which the expression fires in `timeZone`.
    ///
    /// The expression names local wall-clock minutes; each becomes a date by SPEC 5.8's
    /// daylight-saving rules:
    /// - a minute that a change skips (02:30 on a day whose clocks jump from 02:00 to 03:00)
    ///   fires at the first minute after the jump (03:00), once however many skipped minutes
    ///   match, and once even when 03:00 matches too;
    /// - a minute that a change repeats (01:30 on a day whose clocks go back from 02:00 to
    ///   01:00) fires once, at its first occurrence; the repeated hour fires nothing.
    ///
    /// The search skips field by field (the next matching month, day, hour, minute), so it
    /// costs a few steps per day it passes over, never one per minute.
    ///
    /// - Returns: the date, or nil when none matches within 400 years of `date` (a whole cycle
    ///   of the calendar, so never for an expression the parser accepted) or `date` is more
    ///   than 9,000 years from 1970.
    public func nextFireDate(after date: Date, in timeZone: TimeZone) -> Date? {
        let since1970 = date.timeIntervalSince1970
        guard since1970.isFinite, abs(since1970) < 2.8e11 else { return nil }
        let clock = WallClock(timeZone: timeZone)
        var minute = Self.floorDivide(clock.local(Int(since1970.rounded(.down))), 60)
        let lastMinute = minute + 400 * 366 * 1440
        // More than one turn only when `date` lies in the second pass of a repeated hour and
        // the minutes found are those of the first pass, which have fired already.
        while let next = nextMatchingMinute(after: minute, through: lastMinute) {
            let instant = clock.instant(atLocal: next * 60)
            if Double(instant) > since1970 { return Date(timeIntervalSince1970: Double(instant)) }
            minute = next
        }
        return nil
    }

    /// The first local minute (minutes since 1970-01-01 00:00 local) after `minute` that the
    /// expression matches, or nil when there is none up to `limit`.
    func nextMatchingMinute(after minute: Int, through limit: Int) -> Int? {
        let startDay = Self.floorDivide(minute, 1440)
        var (year, month, day) = Self.civil(fromDays: startDay)
        var hour = (minute - startDay * 1440) / 60
        var minuteOfHour = (minute - startDay * 1440) % 60 + 1
        while true {
            // Carry an overflowing field into the next, as a clock does.
            if minuteOfHour > 59 { (minuteOfHour, hour) = (0, hour + 1) }
            if hour > 23 { (hour, day) = (0, day + 1) }
            if day > Self.daysIn(month: month, year: year) { (day, month) = (1, month + 1) }
            if month > 12 { (month, year) = (1, year + 1) }
            let dayNumber = Self.days(year: year, month: month, day: day)
            guard dayNumber * 1440 <= limit else { return nil }

            guard months.contains(month) else {
                // The next matching month this year, or January of the next (13 carries).
                (month, day, hour, minuteOfHour) = (months.first(atOrAbove: month) ?? 13, 1, 0, 0)
                continue
            }
            guard matchesDay(day, weekday: Self.floorModulo(dayNumber + 4, 7)) else {
                (day, hour, minuteOfHour) = (day + 1, 0, 0)
                continue
            }
            guard let matchingHour = hours.first(atOrAbove: hour) else {
                (day, hour, minuteOfHour) = (day + 1, 0, 0)
                continue
            }
            if matchingHour != hour { (hour, minuteOfHour) = (matchingHour, 0) }
            guard let matchingMinute = minutes.first(atOrAbove: minuteOfHour) else {
                (hour, minuteOfHour) = (hour + 1, 0)
                continue
            }
            return dayNumber * 1440 + hour * 60 + matchingMinute
        }
    }

    // Calendar arithmetic on integers (proleptic Gregorian, days since 1970-01-01), after
    // Howard Hinnant's "chrono-compatible low-level date algorithms": Foundation's Calendar
    // costs microseconds per call, and the search makes one per day it passes.

    static func days(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = floorDivide(shiftedYear, 400)
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func floorDivide(_ value: Int, _ divisor: Int) -> Int {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    static func floorModulo(_ value: Int, _ divisor: Int) -> Int {
        value - floorDivide(value, divisor) * divisor
    }
}

/// Local wall-clock time of one time zone, counted in seconds since 1970-01-01 00:00 local,
/// the way Unix time counts UTC: what the cron search works in, with the time zone's jumps
/// applied only when a local time is turned back into an instant.
private struct WallClock {
    let timeZone: TimeZone

    func offset(at instant: Int) -> Int {
        timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant)))
    }

    func local(_ instant: Int) -> Int { instant + offset(at: instant) }

    /// The earliest instant whose local time is `wall`; for a local time that a change skips,
    /// the instant of the change (whose local time is the first one after the gap).
    func instant(atLocal wall: Int) -> Int {
        // The offsets in force a day either side cover the instant sought, which lies within
        // 26 hours of `wall` read as UTC; the offsets at the first guesses add any change
        // between them.
        var candidates = [wall - 86_400, wall, wall + 86_400].map { wall - offset(at: $0) }
        candidates += candidates.map { wall - offset(at: $0) }
        if let earliest = candidates.filter({ local($0) == wall }).min() { return earliest }
        guard var low = candidates.min(), var high = candidates.max(), local(low) < wall, local(high) > wall
        else {
            // Not a single gap (no zone has such data today): the later reading is the one
            // that cannot fire before the wall time comes.
            return candidates.max() ?? wall
        }
        // A gap: find the change, the first instant whose local time is at or past `wall`.
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if local(middle) >= wall { high = middle } else { low = middle }
        }
        return high
    }
}
