/// Why a cron expression was refused: which field is wrong, and how. Its
/// ``description`` is the sentence a user sees, like
/// `cron field 2 (hour) '25' is out of range 0-23`.
public struct CronParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One of the five fields, numbered as a user counts them.
    public enum Field: Int, Sendable, Hashable, CaseIterable {
        /// Field 1, 0…59.
        case minute = 1
        /// Field 2, 0…23.
        case hour
        /// Field 3, 1…31.
        case dayOfMonth
        /// Field 4, 1…12 or `jan`…`dec`.
        case month
        /// Field 5, 0…7 (0 and 7 are Sunday) or `sun`…`sat`.
        case dayOfWeek

        /// The field's name in messages.
        public var name: String {
            switch self {
            case .minute: "minute"
            case .hour: "hour"
            case .dayOfMonth: "day of month"
            case .month: "month"
            case .dayOfWeek: "day of week"
            }
        }

        /// The values the field may be written with (7 is Sunday again in `dayOfWeek`).
        public var range: ClosedRange<Int> {
            switch self {
            case .minute: 0...59
            case .hour: 0...23
            case .dayOfMonth: 1...31
            case .month: 1...12
            case .dayOfWeek: 0...7
            }
        }
    }

    /// What is wrong; each case is put into words in ``CronParseError/description`` alone.
    public enum Reason: Sendable, Hashable {
        /// The text is empty or only spaces.
        case empty
        /// Not five fields; the count found.
        case fieldCount(Int)
        /// An `@` word that is not a known macro.
        case unknownMacro(String)
        /// An empty item in a list, like `1,,2` or a trailing comma.
        case emptyItem
        /// A value that is neither a number nor, where names are allowed, a name.
        case notANumber(String)
        /// A word in the month or day-of-week field that is not a name of one.
        case unknownName(String)
        /// A value outside the field's range.
        case outOfRange(String)
        /// A step that is not a whole number.
        case stepNotANumber(String)
        /// A step of 0.
        case stepTooSmall
        /// A range whose start is after its end, like `5-1`.
        case backwardsRange(String)
        /// The expression is valid but no date matches it: days of the month that none of its
        /// months has, like `0 0 30 2 *`.
        case neverFires(days: [Int], months: [Int])
    }

    /// The field the problem is in; nil for problems of the whole expression.
    public var field: Field?
    /// What is wrong.
    public var reason: Reason

    /// A problem with `reason`, in `field` when it concerns one.
    public init(_ reason: Reason, in field: Field? = nil) {
        self.field = field
        self.reason = reason
    }

    /// The problem as one sentence that says what to write instead.
    public var description: String {
        let place = field.map { "cron field \($0.rawValue) (\($0.name))" } ?? "cron"
        let range = field.map { "\($0.range.lowerBound)-\($0.range.upperBound)" } ?? ""
        switch reason {
        case .empty:
            return "cron must not be empty; write five fields, like '*/15 * * * *', or a macro, like @daily"
        case .fieldCount(let count):
            return
                "cron needs 5 fields (minute hour day-of-month month day-of-week), got \(count), like '*/15 * * * *'"
        case .unknownMacro(let word):
            return
                "unknown cron macro \(VisibleText.quoted(word)); use @hourly, @daily, @midnight, @weekly, @monthly, @yearly or @annually"
        case .emptyItem:
            return "\(place) has an empty item; separate values with single commas, like 1,15,30"
        case .notANumber(let text):
            return "\(place) \(VisibleText.quoted(text)) is not a number in \(range)"
        case .unknownName(let text):
            if field == .month {
                return "\(place): unknown month name \(VisibleText.quoted(text)); use jan-dec or 1-12"
            }
            return
                "\(place): unknown weekday name \(VisibleText.quoted(text)); use sun-sat or 0-7 (0 and 7 are Sunday)"
        case .outOfRange(let text):
            return "\(place) \(VisibleText.quoted(text)) is out of range \(range)"
        case .stepNotANumber(let text):
            return "\(place): step \(VisibleText.quoted(text)) is not a whole number; write it like */15"
        case .stepTooSmall:
            return "\(place): step must be at least 1"
        case .backwardsRange(let text):
            let sunday =
                field == .dayOfWeek
                ? " (for a range that ends on Sunday, write 7 for it: sat-sun is 6-7)" : ""
            return
                "\(place) range \(VisibleText.quoted(text)) goes backwards; write the smaller value first\(sunday)"
        case .neverFires(let days, let months):
            let dayWords =
                days.count == 1
                ? "day \(days[0]) does" : "days \(days.map(String.init).joined(separator: ", ")) do"
            let monthWords = months.map { CronParser.monthFullNames[$0 - 1] }
            return
                "cron never fires: \(dayWords) not occur in \(Self.list(monthWords)); check the day of month and month fields"
        }
    }

    /// `a`, `a or b`, `a, b or c`.
    private static func list(_ words: [String]) -> String {
        guard let last = words.last else { return "" }
        return words.count == 1 ? last : words.dropLast().joined(separator: ", ") + " or " + last
    }
}
