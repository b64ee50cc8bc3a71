import ArgumentParser
import Foundation
import JobRunnerCore

/// `jobrunner wait [--run ID] [--timeout D]`: blocks until a run started elsewhere is final.
struct WaitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wait",
        abstract: "Wait until the current run (or --run ID) is final; exit as `run` would.",
        discussion: """
            Exit status: 0 the run succeeded; 1 it failed; 124 --timeout passed first. A run that no \
            runner works on is waited for until a `jobrunner run` resumes and finishes it.
            """)

    /// The exit status when `--timeout` passes first, as timeout(1) gives.
    static let timedOut: Int32 = 124

    @OptionGroup var global: GlobalOptions

    @Option(
        name: .customLong("run"), help: ArgumentHelp("A run other than the current one.", valueName: "id"))
    var runID: String?

    @Option(help: ArgumentHelp("Give up after this long (like 30s, 10m).", valueName: "duration"))
    var timeout: String?

    func validate() throws {
        if let timeout, JobDuration.parse(timeout) == nil {
            throw ValidationError("--timeout: '\(timeout)' is not a duration (like 30s, 10m, 1h)")
        }
    }

    func run() async throws {
        let stateDirectory = global.stateDirectory
        guard stateDirectory.hasDatabase else {
            printError("jobrunner: no runs yet in \(stateDirectory.path)")
            throw ExitCode(ExitStatus.failed)
        }
        let (store, first) = try await openRun(stateDirectory, runID: runID)
        defer { store.close() }
        let reader = store.reader
        let deadline = timeout.flatMap(JobDuration.parse).map { Date().addingTimeInterval($0.seconds) }
        var told = false
        var run = first.run
        // Another process writes the run: nothing to await across processes, so the record is
        // read a few times a second.
        while !run.state.isFinal {
            if !told, await reader.runnerPID() == nil {
                printError(
                    "jobrunner: run \(run.id) is \(run.state.rawValue) and no runner works on it; waiting for a `jobrunner run` to finish it"
                )
                told = true
            }
            if let deadline, Date() >= deadline {
                printError("jobrunner: run \(run.id) is still \(run.state.rawValue) after \(timeout ?? "")")
                throw ExitCode(Self.timedOut)
            }
            try await Task.sleep(for: .milliseconds(200))
            do {
                // A store read without LMDB's lock file refuses to read once a runner writes.
                run = try await reader.run(run.id) ?? run
            } catch {
                printError("jobrunner: \(error)")
                throw ExitCode(ExitStatus.stateUnusable)
            }
        }
        print("run \(run.id) \(run.state.rawValue)")
        throw run.state == .failed ? ExitCode(ExitStatus.failed) : ExitCode.success
    }
}

/// `jobrunner version`: the same as `--version`.
struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version", abstract: "Print jobrunner's version.")

    @OptionGroup var unusedState: UnusedStateOption

    func run() { print(JobRunnerVersion.current) }
}
