import ArgumentParser
import Foundation
import Glibc
import JobRunnerCore
import JobRunnerLMDB

/// `jobrunner logs JOB [--attempt N] [--run ID] [-f]`.
struct LogsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logs",
        abstract: "Print one attempt's output (the latest attempt unless --attempt is given).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The job's id.")
    var job: String

    @Option(help: ArgumentHelp("Which attempt, counting from 1.", valueName: "n"))
    var attempt: Int?

    @Option(
        name: .customLong("run"), help: ArgumentHelp("A run other than the current one.", valueName: "id"))
    var runID: String?

    @Flag(name: [.short, .long], help: "Keep printing new output until the attempt ends.")
    var follow = false

    func run() async throws {
        let stateDirectory = global.stateDirectory
        guard stateDirectory.hasDatabase else {
            printError("jobrunner: no runs yet in \(stateDirectory.path)")
            throw ExitCode(ExitStatus.failed)
        }
        let (store, snapshot) = try openRun(stateDirectory, runID: runID)
        defer { store.close() }
        guard snapshot.jobs[job] != nil else {
            let hint =
                snapshot.run.jobIDs.first { $0.lowercased() == job.lowercased() }.map {
                    "; did you mean '\($0)'?"
                } ?? ""
            printError("jobrunner: run \(snapshot.run.id) has no job '\(job)'\(hint)")
            throw ExitCode(ExitStatus.failed)
        }
        let attempts = snapshot.attempts[job] ?? []
        guard let chosen = attempt.map({ number in attempts.first { $0.number == number } }) ?? attempts.last
        else {
            if let attempt {
                printError("jobrunner: job '\(job)' has no attempt \(attempt); it has \(attempts.count)")
            } else {
                printError("jobrunner: job '\(job)' has not started yet in run \(snapshot.run.id)")
            }
            throw ExitCode(ExitStatus.failed)
        }
        let path =
            chosen.logPath
            ?? LogLayout.attemptLog(
                in: stateDirectory.logsPath, runID: snapshot.run.id, jobID: job, attempt: chosen.number)
        var offset: UInt64 = 0
        offset = copy(path: path, from: offset)
        guard follow else { return }
        // Following a file that another process appends to: nothing to await, so poll a few
        // times a second until the attempt has an outcome, then print what is left.
        while true {
            try await Task.sleep(for: .milliseconds(250))
            offset = copy(path: path, from: offset)
            let current = try? store.snapshot(runID: snapshot.run.id)?.attempts[job]?.first {
                $0.number == chosen.number
            }
            if current?.outcome != nil {
                _ = copy(path: path, from: offset)
                return
            }
        }
    }

    /// Copies the file from `offset` to standard output; returns the new offset.
    private func copy(path: String, from offset: UInt64) -> UInt64 {
        guard let handle = FileHandle(forReadingAtPath: path) else { return offset }
        defer { try? handle.close() }
        try? handle.seek(toOffset: offset)
        let data = handle.readDataToEndOfFile()
        FileHandle.standardOutput.write(data)
        return offset + UInt64(data.count)
    }
}
