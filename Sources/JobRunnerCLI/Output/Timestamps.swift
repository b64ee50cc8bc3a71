import Foundation

/// Date formats of the command line: ISO 8601 with milliseconds in UTC for machines, local
/// wall-clock time for people.
enum Timestamps {
    /// `2026-11-22T10:00:00.123Z`.
    static func iso(_ date: Date) -> String {
        withISO(date) { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with the bytes of `iso(date)`, made on the stack: `status --json` of a
    /// 100,000-job run writes 200,000 dates or more, and a `String` of each cost more than the
    /// rest of the line.
    static func withISO<Result>(_ date: Date, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        // gmtime_r and digits written in place rather than ISO8601FormatStyle: an events line per
        // transition writes one too.
        let since1970 = date.timeIntervalSince1970
        var seconds = time_t(since1970.rounded(.down))
        let milliseconds = min(999, Int(((since1970 - Double(seconds)) * 1000).rounded(.down)))
        var parts = tm()
        gmtime_r(&seconds, &parts)
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
            put(Int(parts.tm_year) + 1900, 4)
            put("-")
            put(Int(parts.tm_mon) + 1, 2)
            put("-")
            put(Int(parts.tm_mday), 2)
            put("T")
            put(Int(parts.tm_hour), 2)
            put(":")
            put(Int(parts.tm_min), 2)
            put(":")
            put(Int(parts.tm_sec), 2)
            put(".")
            put(milliseconds, 3)
            put("Z")
            return body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<index]))
        }
    }

    /// `10:04:31`, local time.
    static func clock(_ date: Date) -> String {
        // localtime_r rather than Calendar: a progress line per transition, 40,000 in a big run.
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return two(parts.tm_hour) + ":" + two(parts.tm_min) + ":" + two(parts.tm_sec)
    }

    /// `10:04:31` for a moment of today, `2026-11-21 10:04:31` for another day, local time: a
    /// time of day alone would pass yesterday's run for today's.
    static func moment(_ date: Date, now: Date = Date()) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var today = time_t(now.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        var todayParts = tm()
        localtime_r(&seconds, &parts)
        localtime_r(&today, &todayParts)
        let sameDay =
            parts.tm_year == todayParts.tm_year && parts.tm_mon == todayParts.tm_mon
            && parts.tm_mday == todayParts.tm_mday
        if sameDay { return clock(date) }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) " + clock(date)
    }

    /// `1.2s`, `3m04s`, `2h01m`.
    static func elapsed(_ seconds: Double) -> String {
        if seconds < 60 { return String(format: "%.1fs", max(0, seconds)) }
        let whole = Int(seconds)
        if whole < 3600 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        return String(format: "%dh%02dm", whole / 3600, (whole % 3600) / 60)
    }
}
