import Foundation

/// Dates for machines: ISO 8601 with milliseconds in UTC, as `status --json`, `runs --json`,
/// `--events` and the HTTP API write them.
public enum ISOTimestamp {
    /// `2026-11-22T10:00:00.123Z`.
    public static func iso(_ date: Date) -> String {
        withISO(date) { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with the bytes of `iso(date)`, made on the stack: `status --json` of a
    /// 100,000-job run writes 200,000 dates or more, and a `String` of each cost more than the
    /// rest of the line.
    public static func withISO<Result>(_ date: Date, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        // The civil date computed and its digits written in place rather than ISO8601FormatStyle
        // (or gmtime_r): an events line per transition writes one too.
        let (seconds, milliseconds) = wholeSeconds(date)
        let parts = CivilTime(secondsSince1970: seconds)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            var index = 0
            func put(_ value: Int, _ width: Int) {
                var rest = max(0, value)
                for offset in stride(from: width - 1, through: 0, by: -1) {
                    buffer[index + offset] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                index += width
            }
            func put(_ byte: Character) {
                buffer[index] = byte.asciiValue ?? 0
                index += 1
            }
            put(parts.year, 4)
            put("-")
            put(parts.month, 2)
            put("-")
            put(parts.day, 2)
            put("T")
            put(parts.secondOfDay / 3600, 2)
            put(":")
            put(parts.secondOfDay / 60 % 60, 2)
            put(":")
            put(parts.secondOfDay % 60, 2)
            put(".")
            put(milliseconds, 3)
            put("Z")
            return body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<index]))
        }
    }

    /// A date's whole seconds since 1970 (rounded down) and the milliseconds past them.
    public static func wholeSeconds(_ date: Date) -> (seconds: Int, milliseconds: Int) {
        let since1970 = date.timeIntervalSince1970
        let seconds = Int(since1970.rounded(.down))
        return (seconds, min(999, Int(((since1970 - Double(seconds)) * 1000).rounded(.down))))
    }

    /// Writes `iso(date)` of many dates into bytes. Dates of the second before share its
    /// calendar date and time of day, made once: a big run's jobs end hundreds to a second.
    public struct Writer {
        private var second: Int?
        /// `2026-11-22T10:00:00.` of `second`.
        private var head: [UInt8] = []

        public init() {}

        /// Appends the ISO 8601 form of `date`.
        public mutating func append(_ date: Date, to bytes: inout [UInt8]) {
            let (seconds, milliseconds) = ISOTimestamp.wholeSeconds(date)
            if second != seconds {
                head = withISO(date) { Array($0.dropLast(4)) }
                second = seconds
            }
            bytes.append(contentsOf: head)
            bytes.append(UInt8(ascii: "0") + UInt8(milliseconds / 100))
            bytes.append(UInt8(ascii: "0") + UInt8(milliseconds / 10 % 10))
            bytes.append(UInt8(ascii: "0") + UInt8(milliseconds % 10))
            bytes.append(UInt8(ascii: "Z"))
        }
    }
}

/// A moment's UTC calendar date and second of the day, by arithmetic on the days since 1970
/// (the proleptic Gregorian calendar, as `gmtime_r` and ISO 8601 count).
public struct CivilTime: Sendable {
    public var year: Int
    public var month: Int
    public var day: Int
    public var secondOfDay: Int

    public init(secondsSince1970 seconds: Int) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        secondOfDay = seconds - days * 86_400
        // Days since 0000-03-01, counted in eras of 400 years (146,097 days each), with the
        // year starting in March so that a leap day ends it.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }
}
