import ArgumentParser
import Foundation
import JobRunnerCore

/// `jobrunner prune [--keep N] [--older-than D]`: delete finished runs and their logs now.
struct PruneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Delete finished runs, and their logs, beyond a number or an age.",
        discussion: """
            Runs that are not finished, and the current run, are never deleted. A runner applies the \
            job files' `retention:` by itself after each run or occurrence; this applies the options now. \
            Works beside a runner.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Keep at most this many finished runs (default 100).", valueName: "n"))
    var keep: Int = RetentionPolicy.defaultRuns

    @Option(
        name: .customLong("older-than"),
        help: ArgumentHelp(
            "Delete finished runs that ended longer ago than this (default 30d).", valueName: "duration"))
    var olderThan: String = "30d"

    func validate() throws {
        if keep < 0 { throw ValidationError("--keep must be 0 or more, not \(keep)") }
        guard let age = JobDuration.parse(olderThan) else {
            throw ValidationError("--older-than takes a duration such as 12h or 7d, not '\(olderThan)'")
        }
        guard age > .zero else {
            throw ValidationError(
                "--older-than must be longer than 0s; to delete every finished run but the newest N, use --keep N"
            )
        }
    }

    func run() async throws {
        let stateDirectory = global.stateDirectory
        guard stateDirectory.hasDatabase else {
            print("no runs yet in \(stateDirectory.path)")
            return
        }
        let policy = RetentionPolicy(
            runs: keep, age: JobDuration.parse(olderThan) ?? RetentionPolicy.defaultAge)
        do {
            let store = try await stateDirectory.openForWriting()
            defer { store.close() }
            let runs = try await store.reader.runs()
            let current = try await store.reader.currentRunID().map { Set([$0]) } ?? []
            // The runs of one-shot jobs and each periodic job's occurrences counted apart.
            let ids = RetentionPolicy.runsToPrune(runs, now: Date(), keeping: current) { _ in policy }
            if !ids.isEmpty {
                try await store.store.prune(runs: ids)
                for id in ids {
                    try? FileManager.default.removeItem(atPath: "\(stateDirectory.logs.logsPath)/\(id)")
                }
            }
            print("pruned \(ids.count) run\(ids.count == 1 ? "" : "s"); \(runs.count - ids.count) kept")
        } catch {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
    }
}
