import ArgumentParser
import Foundation
import JobRunnerCore
import JobRunnerYAML

/// `jobrunner next [PATH…] [--count N] [--from DATE]`: when each periodic job fires next.
struct NextCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "next",
        abstract: "Show the next fire dates of each periodic job.",
        discussion: """
            Lists each job with every: or cron:, and its next dates after now (or --from) in its \
            time zone and in local time. An every: job counts from when a runner first sees it; \
            `next` reads no state, so it counts from now. Exits 2 if the job files have problems.
            """
    )

    @Argument(help: "Job files or directories (default: jobs/).")
    var paths: [String] = []

    @OptionGroup var envFiles: EnvFileOptions
    @OptionGroup var unusedState: UnusedStateOption

    @Option(help: "How many dates to show per job (1 to 1000).")
    var count = 5

    @Option(
        help: ArgumentHelp(
            "Count from this date instead of now, like 2026-03-28T12:00:00Z or 2026-03-28T13:00:00+01:00.",
            valueName: "date"))
    var from: String?

    func validate() throws {
        guard (1...1000).contains(count) else {
            throw ValidationError("--count must be between 1 and 1000, not \(count)")
        }
        if let from, Self.date(from) == nil {
            throw ValidationError(
                "--from '\(from)' is not a date; write it like 2026-03-28T12:00:00Z or 2026-03-28T13:00:00+01:00"
            )
        }
    }

    func run() async throws {
        let jobSet = await JobSet.load(paths, environment: try envFiles.apply())
        guard let workload = jobSet.workload else { throw ExitCode(ExitStatus.invalid) }
        let start = from.flatMap(Self.date)
        let text = Self.render(
            workload.jobs, files: jobSet.result.files.count, from: start ?? Date(), fromNow: start == nil,
            count: count, local: .current)
        print(text, terminator: "")
    }

    /// An ISO 8601 date with a time and an offset (`Z` or `±hh:mm`).
    static func date(_ text: String) -> Date? {
        try? Date(text, strategy: .iso8601)
    }

    /// The listing: a line for when and where it counts from, then each periodic job with its
    /// dates, in load order; a sentence when there is no periodic job.
    /// - Parameters:
    ///   - from: the date the dates come after (and the anchor of `every:` jobs).
    ///   - fromNow: whether `from` is now, for the words.
    ///   - local: the time zone the second column is in.
    static func render(
        _ jobs: [JobDefinition], files: Int, from: Date, fromNow: Bool, count: Int, local: TimeZone
    ) -> String {
        let periodic = jobs.filter(\.isPeriodic)
        guard !periodic.isEmpty else {
            return "no periodic jobs in \(files) file\(files == 1 ? "" : "s"): none has every: or cron:\n"
        }
        let start = fromNow ? "now" : format(from, in: local)
        var lines = [
            "next \(count) fire date\(count == 1 ? "" : "s") after \(start), local time \(local.shownName)"
        ]
        for job in periodic {
            guard let schedule = job.schedule else { continue }
            let disabled = job.enabled ? "" : " (enabled: false, so never started)"
            lines.append("")
            let dates = schedule.nextFireDates(after: from, anchor: from, count: count)
            switch schedule {
            case .every:
                // `next` reads no state, so it cannot know when a runner first saw the job.
                lines.append(
                    "\(job.id): \(schedule)\(disabled), counted from \(start)"
                        + " (a runner counts from when it first sees the job, and runs it at once then)")
                lines += dates.map { "  \(format($0, in: local)) local" }
            case .cron(_, let zone):
                lines.append("\(job.id): \(schedule)\(disabled)")
                lines += dates.map { "  \(format($0, in: zone))  =  \(format($0, in: local)) local" }
            }
            if dates.count < count { lines.append("  (no later date)") }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `2026-03-08 03:00:00 -04:00`: wall-clock time in `zone` with its offset from UTC. The
    /// offset is the one the fire dates are computed with (`secondsFromGMT(for:)`): a formatter
    /// given the zone reads its own time zone data, which for a few names (`EST`) is another zone.
    static func format(_ date: Date, in zone: TimeZone) -> String {
        let offset = zone.secondsFromGMT(for: date)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let wall = formatter.string(from: date.addingTimeInterval(TimeInterval(offset)))
        let minutes = abs(offset) / 60
        let sign = offset < 0 ? "-" : "+"
        let hours = String(minutes / 60).leftPadded(to: 2)
        return "\(wall) \(sign)\(hours):\(String(minutes % 60).leftPadded(to: 2))"
    }
}

extension String {
    /// This text with zeros in front up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
