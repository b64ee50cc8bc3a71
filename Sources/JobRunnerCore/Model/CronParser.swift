/// Turns the text of a cron expression into a ``CronExpression``, or into the
/// ``CronParseError`` of the first field that is wrong.
enum CronParser {
    static let monthNames = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]
    static let monthFullNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
        "November", "December",
    ]
    static let weekdayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    /// The macros of crontab(5) that name a time (`@reboot` names an event jobrunner has not).
    static let macros = [
        "@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@weekly": "0 0 * * 0",
        "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *",
    ]

    static func parse(_ text: String) throws(CronParseError) -> CronExpression {
        let trimmed = text.trimmingSpaces()
        guard !trimmed.isEmpty else { throw CronParseError(.empty) }
        let words = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" })
        var fields = words
        if let first = words.first, first.hasPrefix("@") {
            guard words.count == 1, let expansion = macros[first.lowercased()] else {
                throw CronParseError(.unknownMacro(String(first)))
            }
            fields = expansion.split(separator: " ")
        }
        guard fields.count == 5 else { throw CronParseError(.fieldCount(fields.count)) }
        let minutes = try parseField(fields[0], .minute)
        let hours = try parseField(fields[1], .hour)
        let daysOfMonth = try parseField(fields[2], .dayOfMonth)
        let months = try parseField(fields[3], .month)
        var daysOfWeek = try parseField(fields[4], .dayOfWeek)
        if daysOfWeek.contains(7) { daysOfWeek = (daysOfWeek & ~(1 << 7)) | 1 }
        // crontab(5): a day field is "restricted" unless its text starts with '*' — so `*/2`
        // counts as unrestricted, as in Vixie cron, even though it leaves days out.
        let eitherDayMatches = !fields[2].hasPrefix("*") && !fields[4].hasPrefix("*")
        if !eitherDayMatches {
            try checkSomeDayExists(daysOfMonth: daysOfMonth, months: months)
        }
        return CronExpression(
            text: trimmed, minutes: minutes, hours: hours, daysOfMonth: daysOfMonth, months: months,
            daysOfWeek: daysOfWeek, eitherDayMatches: eitherDayMatches)
    }

    /// Refuses day-of-month and month fields that no date satisfies (`0 0 30 2 *`), so a search
    /// for the next date never runs without end. Any date that exists falls on every day of the
    /// week within 400 years, so the day-of-week field cannot make a possible date impossible.
    private static func checkSomeDayExists(daysOfMonth: UInt64, months: UInt64) throws(CronParseError) {
        let longest = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        if let earliest = daysOfMonth.first(atOrAbove: 1),
            months.members.contains(where: { earliest <= longest[$0 - 1] })
        {
            return
        }
        throw CronParseError(.neverFires(days: daysOfMonth.members, months: months.members))
    }

    /// One field: a comma-separated list of `*`, `v`, `a-b`, each optionally with `/step`.
    private static func parseField(_ text: Substring, _ field: CronParseError.Field) throws(CronParseError)
        -> UInt64
    {
        // `*` and `a/n` reach Saturday, not 7: Sunday is already 0, and a step counted over
        // 0…7 would land on Sunday twice.
        let last = field == .dayOfWeek ? 6 : field.range.upperBound
        var bits: UInt64 = 0
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard !item.isEmpty else { throw CronParseError(.emptyItem, in: field) }
            var base = item
            var step = 1
            if let slash = item.firstIndex(of: "/") {
                base = item[..<slash]
                let stepText = item[item.index(after: slash)...]
                guard !stepText.isEmpty, stepText.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                    throw CronParseError(.stepNotANumber(String(stepText)), in: field)
                }
                // More digits than an Int holds: a step longer than any field, so one value.
                step = Int(stepText) ?? Int.max
                guard step >= 1 else { throw CronParseError(.stepTooSmall, in: field) }
            }
            let low: Int
            let high: Int
            if base == "*" {
                low = field.range.lowerBound
                high = last
            } else if let dash = base.dropFirst().firstIndex(of: "-") {
                low = try value(base[..<dash], field)
                high = try value(base[base.index(after: dash)...], field)
                guard low <= high else { throw CronParseError(.backwardsRange(String(base)), in: field) }
            } else {
                low = try value(base, field)
                // `a/n` is `a-<last>/n`, as cronie and most other crons read it.
                high = item.contains("/") ? max(low, last) : low
            }
            var value = low
            while value <= high {
                bits |= 1 << UInt64(value)
                let (next, overflow) = value.addingReportingOverflow(step)
                if overflow { break }
                value = next
            }
        }
        return bits
    }

    /// One value: a number in the field's range, or a month or weekday name where allowed.
    private static func value(_ text: Substring, _ field: CronParseError.Field) throws(CronParseError) -> Int
    {
        if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            guard let number = Int(text), field.range.contains(number) else {
                throw CronParseError(.outOfRange(String(text)), in: field)
            }
            return number
        }
        let names: [String]
        switch field {
        case .month: names = monthNames
        case .dayOfWeek: names = weekdayNames
        default: throw CronParseError(.notANumber(String(text)), in: field)
        }
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw CronParseError(.notANumber(String(text)), in: field)
        }
        guard let index = names.firstIndex(of: text.lowercased()) else {
            throw CronParseError(.unknownName(String(text)), in: field)
        }
        return field == .month ? index + 1 : index
    }
}
