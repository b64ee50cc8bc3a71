/// A cron expression as crontab(5) defines it: five fields, `minute hour day-of-month month
/// day-of-week`, or one of the macros `@hourly`, `@daily` (`@midnight`), `@weekly`,
/// `@monthly`, `@yearly` (`@annually`).
///
/// Each field is `*` or a comma-separated list of items; an item is a value, a range `a-b`,
/// or either of those or `*` followed by a step `/n`. `a/n` means `a-<last>/n`. Months take
/// the names `jan`…`dec`, days of the week `sun`…`sat` (any case); Sunday is 0 or 7. When
/// both day fields are restricted (neither starts with `*`), a day matches if either does;
/// otherwise it must match both. Dates are computed by
/// ``nextFireDate(after:in:)``; an expression that can never match (`0 0 30 2 *`) is refused
/// when parsed.
public struct CronExpression: Sendable, Hashable {
    /// The expression as written, like `*/15 9-17 * * mon-fri` or `@daily`.
    public let text: String

    // Each field as a set of bits: bit n set means value n matches. Days of the week are
    // 0 (Sunday) to 6; a 7 in the text is stored as 0.
    let minutes: UInt64
    let hours: UInt64
    let daysOfMonth: UInt64
    let months: UInt64
    let daysOfWeek: UInt64
    /// crontab(5)'s rule: both day fields restricted (neither starts with `*`), so a day
    /// matches when either field does; otherwise it must match both.
    let eitherDayMatches: Bool

    /// Parses a cron expression.
    /// - Throws: ``CronParseError``, naming the field that is wrong and why.
    public init(_ text: String) throws(CronParseError) {
        self = try CronParser.parse(text)
    }

    init(
        text: String, minutes: UInt64, hours: UInt64, daysOfMonth: UInt64, months: UInt64,
        daysOfWeek: UInt64, eitherDayMatches: Bool
    ) {
        self.text = text
        self.minutes = minutes
        self.hours = hours
        self.daysOfMonth = daysOfMonth
        self.months = months
        self.daysOfWeek = daysOfWeek
        self.eitherDayMatches = eitherDayMatches
    }

    /// Whether the expression fires on this date, by the day fields alone.
    /// - Parameters:
    ///   - day: day of the month, 1…31.
    ///   - weekday: 0 (Sunday) to 6.
    func matchesDay(_ day: Int, weekday: Int) -> Bool {
        let byMonthDay = daysOfMonth.contains(day)
        let byWeekday = daysOfWeek.contains(weekday)
        return eitherDayMatches ? (byMonthDay || byWeekday) : (byMonthDay && byWeekday)
    }
}

extension CronExpression: CustomStringConvertible {
    /// The expression as written.
    public var description: String { text }
}

extension UInt64 {
    /// Whether bit `value` is set (false outside 0…63).
    func contains(_ value: Int) -> Bool {
        (0..<64).contains(value) && self & (1 << UInt64(value)) != 0
    }

    /// The smallest set bit at or above `value`, if any.
    func first(atOrAbove value: Int) -> Int? {
        guard value < 64 else { return nil }
        let rest = value <= 0 ? self : (self >> UInt64(value)) << UInt64(value)
        return rest == 0 ? nil : rest.trailingZeroBitCount
    }

    /// The set bits, smallest first.
    var members: [Int] { (0..<64).filter { contains($0) } }
}
