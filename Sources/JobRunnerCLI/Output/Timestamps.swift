import Foundation
import JobRunnerCore

/// Date formats of the command line: ISO 8601 with milliseconds in UTC for machines, local
/// wall-clock time for people.
enum Timestamps {
    /// `2026-11-22T10:00:00.123Z` (``ISOTimestamp/iso(_:)``).
    static func iso(_ date: Date) -> String { ISOTimestamp.iso(date) }

    /// Calls `body` with the bytes of `iso(date)` (``ISOTimestamp/withISO(_:_:)``).
    static func withISO<Result>(_ date: Date, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        ISOTimestamp.withISO(date, body)
    }

    /// Writes `iso(date)` of many dates into bytes (``ISOTimestamp/Writer``).
    typealias ISOWriter = ISOTimestamp.Writer

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

/// A moment's UTC calendar date and second of the day (``JobRunnerCore/CivilTime``).
typealias CivilTime = JobRunnerCore.CivilTime
