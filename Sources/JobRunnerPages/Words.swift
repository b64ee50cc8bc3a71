import Foundation
import JobRunnerCore

/// Dates, durations and states in the words the command line uses (`status`, `runs`, `logs`),
/// so that a page and a terminal say the same thing the same way.
enum Words {
    /// `10:04:31`, local time.
    static func clock(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        return two(parts.tm_hour) + ":" + two(parts.tm_min) + ":" + two(parts.tm_sec)
    }

    /// `10:04:31` for a moment of the day of `now`, `2026-11-21 10:04:31` for another day.
    static func moment(_ date: Date, now: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var today = time_t(now.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        var todayParts = tm()
        localtime_r(&seconds, &parts)
        localtime_r(&today, &todayParts)
        if parts.tm_year == todayParts.tm_year && parts.tm_mon == todayParts.tm_mon
            && parts.tm_mday == todayParts.tm_mday
        {
            return clock(date)
        }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) " + clock(date)
    }

    /// `2026-11-21 10:04:31`, local time, whatever the day.
    static func date(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) " + clock(date)
    }

    /// `1.2s`, `3m04s`, `2h01m`.
    static func elapsed(_ seconds: Double) -> String {
        if seconds < 60 { return String(format: "%.1fs", max(0, seconds)) }
        let whole = Int(seconds)
        if whole < 3600 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        return String(format: "%dh%02dm", whole / 3600, (whole % 3600) / 60)
    }

    /// `12 s ago`, `3 min ago`, `2 h ago`, `4 d ago`; `in 5 min` for a date after `now`.
    static func relative(_ date: Date, now: Date) -> String {
        let seconds = now.timeIntervalSince(date)
        let amount = abs(seconds)
        let words: String
        if amount < 60 {
            words = "\(Int(amount)) s"
        } else if amount < 3600 {
            words = "\(Int(amount / 60)) min"
        } else if amount < 86_400 {
            words = "\(Int(amount / 3600)) h"
        } else {
            words = "\(Int(amount / 86_400)) d"
        }
        return seconds >= 0 ? words + " ago" : "in " + words
    }

    /// `2026-11-22T10:00:00Z`, for `<time datetime>`.
    static func iso(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// How long a run took, `-` while it runs (as `runs` says).
    static func took(_ run: RunRecord) -> String {
        // An occurrence recorded skipped or missed never started: it took no time.
        guard !run.neverStarted else { return "-" }
        return run.finishedAt.map { elapsed($0.timeIntervalSince(run.startedAt)) } ?? "-"
    }

    /// `3 succeeded, 1 failed`, in the order of the states (as `runs` says).
    static func counts(_ counts: [JobState: Int]) -> String {
        JobState.allCases.compactMap { state in counts[state].map { "\($0) \(state.rawValue)" } }
            .joined(separator: ", ")
    }

    /// `1 byte`, `2.5 KiB`, `10.0 MiB`.
    static func bytes(_ count: UInt64) -> String {
        if count < 1024 { return "\(count) byte\(count == 1 ? "" : "s")" }
        if count < 1 << 20 { return String(format: "%.1f KiB", Double(count) / 1024) }
        if count < 1 << 30 { return String(format: "%.1f MiB", Double(count) / Double(1 << 20)) }
        return String(format: "%.1f GiB", Double(count) / Double(1 << 30))
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
