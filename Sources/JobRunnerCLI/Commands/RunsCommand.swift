import ArgumentParser
import Foundation
import JobRunnerCore

/// `jobrunner runs [--json] [--limit N] [--job ID]`: the history, newest first.
struct RunsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runs",
        abstract: "List runs, newest first: each run of the jobs and each periodic occurrence.",
        discussion:
            "An occurrence of a periodic job is a run of its own; `status --run ID` and `logs --run ID` show it."
    )

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print JSON lines instead of a table.")
    var json = false

    @Option(help: ArgumentHelp("Show at most this many runs.", valueName: "n"))
    var limit: Int = 20

    @Option(
        name: .customLong("job"),
        help: ArgumentHelp(
            "Only the runs of this job: a periodic job's occurrences, or the runs that hold a one-shot job.",
            valueName: "id"))
    var job: String?

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1, not \(limit)") }
    }

    func run() async throws {
        let stateDirectory = global.stateDirectory
        guard stateDirectory.hasDatabase else {
            if !json { print("no runs yet in \(stateDirectory.path)") }
            return
        }
        do {
            let store = try await stateDirectory.openForReading()
            defer { store.close() }
            var rows: [[String]] = []
            for entry in try await store.reader.recentRuns(limit: limit, job: job) {
                if json {
                    print(Self.json(entry.run, counts: entry.counts))
                } else {
                    rows.append(Self.row(entry.run, counts: entry.counts))
                }
            }
            if !json {
                print(Table(header: ["RUN", "OF", "STATE", "STARTED", "TOOK", "JOBS"], rows: rows).text)
            }
        } catch {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
    }

    private static func summary(_ counts: [JobState: Int]) -> String {
        JobState.allCases.compactMap { state in counts[state].map { "\($0) \(state.rawValue)" } }
            .joined(separator: ", ")
    }

    static func row(_ run: RunRecord, counts: [JobState: Int]) -> [String] {
        // An occurrence that never ran has no start and took no time: "-", not its recording.
        let started = run.neverStarted ? "-" : Timestamps.clock(run.startedAt)
        let took =
            run.neverStarted
            ? "-" : run.finishedAt.map { Timestamps.elapsed($0.timeIntervalSince(run.startedAt)) } ?? "-"
        let of =
            run.occurrenceOf.map { job in
                "\(job) @ \(run.scheduledAt.map(Timestamps.clock) ?? "?")"
                    + (run.manual == true ? " (trigger)" : "")
            } ?? "jobs"
        return [run.id, of, run.state.rawValue, started, took, summary(counts)]
    }

    /// A line of `runs --json`: ``RunsJSON``, which the HTTP API writes too.
    static func json(_ run: RunRecord, counts: [JobState: Int]) -> String {
        RunsJSON.line(run, counts: counts)
    }
}

/// Columns padded to their widest cell; the last column is not padded.
struct Table {
    var header: [String]
    var rows: [[String]]

    var text: String {
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1
                    ? cell : cell.padding(toLength: widths[index] + 2, withPad: " ", startingAt: 0)
            }.joined()
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n")
    }
}
