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
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let parts = calendar.dateComponents([.hour, .minute, .second], from: date)
        return [parts.hour, parts.minute, parts.second].map { String(format: "%02d", $0 ?? 0) }.joined(
            separator: ":")
    }

    /// `1.2s`, `3m04s`, `2h01m`.
    static func elapsed(_ seconds: Double) -> String {
        if seconds < 60 { return String(format: "%.1fs", max(0, seconds)) }
        let whole = Int(seconds)
        if whole < 3600 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        return String(format: "%dh%02dm", whole / 3600, (whole % 3600) / 60)
    }
}
