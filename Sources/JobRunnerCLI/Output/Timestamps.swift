import Foundation

/// Date formats of the command line: ISO 8601 with milliseconds in UTC for machines, local
/// wall-clock time for people.
enum Timestamps {
    /// `2026-11-22T10:00:00.123Z`.
    static func iso(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
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

    /// `1.2s`, `3m04s`, `2h01m`.
    static func elapsed(_ seconds: Double) -> String {
        if seconds < 60 { return String(format: "%.1fs", max(0, seconds)) }
        let whole = Int(seconds)
        if whole < 3600 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        return String(format: "%dh%02dm", whole / 3600, (whole % 3600) / 60)
    }
}
