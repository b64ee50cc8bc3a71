import Foundation

/// When a periodic job fires (SPEC 5.8): at a fixed interval from an anchor, or at the dates a
/// cron expression names in a time zone.
///
/// A schedule is a pure function of dates: it reads no clock. The runner keeps the anchor
/// (when it first saw the job) and asks for the date after the last occurrence, so the dates
/// never drift with how long an occurrence ran.
public enum Schedule: Sendable, Hashable {
    /// `every: 15m`: at anchor + k × interval for k = 0, 1, 2, …, in elapsed time, so a
    /// daylight-saving change moves nothing. The interval is longer than zero.
    case every(Duration)
    /// `cron: "…"`: the minutes the expression names in `timeZone` (the job's `timezone:`, else
    /// the local time zone when the job file was loaded), with SPEC 5.8's daylight-saving rules;
    /// see ``CronExpression/nextFireDate(after:in:)``.
    case cron(CronExpression, timeZone: TimeZone)

    /// The first fire date strictly after `date`.
    ///
    /// - Parameters:
    ///   - date: the date to look after: usually the last occurrence's scheduled date, or now.
    ///   - anchor: for `every`, when the job was first seen: its first occurrence, from which
    ///     every later one is counted (`anchor` itself when `date` is before it). Cron
    ///     schedules ignore it.
    /// - Returns: the date, or nil when none comes (an `every` of zero length, which the
    ///   loader never makes, or a cron expression with no date within 400 years of `date`,
    ///   which the parser refuses).
    public func nextFireDate(after date: Date, anchor: Date) -> Date? {
        switch self {
        case .every(let interval):
            return Self.nextMultiple(of: interval, from: anchor, after: date)
        case .cron(let expression, let timeZone):
            return expression.nextFireDate(after: date, in: timeZone)
        }
    }

    /// The next `count` fire dates strictly after `date`, earliest first; fewer when the
    /// schedule ends (see ``nextFireDate(after:anchor:)``).
    public func nextFireDates(after date: Date, anchor: Date, count: Int) -> [Date] {
        var dates: [Date] = []
        var last = date
        while dates.count < count, let next = nextFireDate(after: last, anchor: anchor) {
            dates.append(next)
            last = next
        }
        return dates
    }

    /// `anchor + k × interval` for the smallest k ≥ 0 that is after `date`.
    private static func nextMultiple(of interval: Duration, from anchor: Date, after date: Date) -> Date? {
        let step = interval.milliseconds
        guard step > 0 else { return nil }
        if date < anchor { return anchor }
        // Counted in whole steps from the anchor, never from the previous date, so rounding
        // cannot accumulate over many occurrences.
        func at(_ k: Int64) -> Date { anchor.addingTimeInterval(Double(k) * Double(step) / 1000) }
        let elapsed = date.timeIntervalSince(anchor) * 1000
        guard elapsed.isFinite, elapsed < 1e17 else { return nil }
        var k = Int64((elapsed / Double(step)).rounded(.down)) + 1
        // The division is in floating point; these settle k exactly on the first step after.
        while at(k) <= date { k += 1 }
        while k > 0, at(k - 1) > date { k -= 1 }
        return at(k)
    }
}

extension Schedule: CustomStringConvertible {
    /// `every 15m`, or `cron '*/15 * * * *' in Europe/Berlin`.
    public var description: String {
        switch self {
        case .every(let interval): "every \(JobDuration.format(interval))"
        case .cron(let expression, let timeZone): "cron '\(expression)' in \(timeZone.shownName)"
        }
    }
}

extension TimeZone {
    /// The zone's name as jobrunner shows it. Foundation gives UTC the identifier `GMT`; the
    /// two are one zone, shown as `UTC`.
    public var shownName: String { identifier == "GMT" ? "UTC" : identifier }
}

/// What becomes of the occurrences a periodic job missed while no runner was up (SPEC 5.8,
/// `catchUp:`).
public enum CatchUp: String, Sendable, Hashable, CaseIterable {
    /// Missed occurrences are dropped; the job next runs at its next date.
    case none
    /// One run stands for all the missed occurrences: the latest of them. The default.
    case latest
    /// Each missed occurrence runs, at most ``maximumCaughtUp`` of them; the rest are recorded
    /// as missed.
    case all

    /// At most this many missed occurrences run under `catchUp: all`.
    public static let maximumCaughtUp = 100
}

/// What happens when an occurrence comes due while the job's last one still runs (SPEC 5.8,
/// `overlap:`). A job never has two attempts running at once.
public enum Overlap: String, Sendable, Hashable, CaseIterable {
    /// The new occurrence is not run; it is recorded, with a `disabled` event. The default.
    case skip
    /// The new occurrence waits for the running one to end; at most one waits.
    case queue
    /// The running occurrence is cancelled and the new one starts.
    case replace
}
