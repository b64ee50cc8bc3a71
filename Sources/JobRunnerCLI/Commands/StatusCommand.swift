import ArgumentParser
import Foundation
import JobRunnerCore

/// `jobrunner status [--json] [--run ID]`.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the jobs and pipelines of the current run and what each waiting job waits for.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print JSON (the format of SPEC 5.11).")
    var json = false

    @Option(
        name: .customLong("run"),
        help: ArgumentHelp("Show this run instead of the current one.", valueName: "id"))
    var runID: String?

    @Flag(
        help: ArgumentHelp(
            "List every job. Without it, a run of more than \(RunView.fullListLimit) jobs lists only the jobs that did not succeed and counts the others."
        ))
    var all = false

    func run() async throws {
        let stateDirectory = global.stateDirectory
        let json = json
        let noRuns = {
            if json {
                print("{\"run\": null, \"jobs\": [], \"pipelines\": []}")
            } else {
                print("no runs yet in \(stateDirectory.path)")
            }
        }
        guard stateDirectory.hasDatabase else { return noRuns() }
        // One store for the whole command: LMDB must not have one environment open twice in a
        // process, and a closed store's environment is released by its writer thread, later.
        let all = all || json
        let (store, view) = try await openRun(stateDirectory, runID: runID, ifNoCurrentRun: noRuns) {
            reader, id throws(StoreError) in
            try await reader.runView(runID: id, all: all, countsUnlisted: !json)
        }
        defer { store.close() }
        let report = StatusReport(view: view, describing: !json)
        if json {
            report.writeJSON { bytes in writeBytes(STDOUT_FILENO, bytes) }
        } else {
            print(report.table())
        }
    }
}

/// Opens the store beside any runner and reads a run (the current one when `runID` is nil).
/// - Parameter forWriting: opens the store to write to it too; else it is opened read-only
///   (``StoreOpener/openForReading()``).
func openRun(_ stateDirectory: StoreOpener, runID: String?, forWriting: Bool = false) async throws -> (
    OpenedStore, RunSnapshot
) {
    try await openRun(stateDirectory, runID: runID, forWriting: forWriting) { reader, id throws(StoreError) in
        try await reader.snapshot(runID: id)
    }
}

/// Opens the store beside any runner and reads what `read` reads of a run (the current one
/// when `runID` is nil); says so and exits when there is no such run or the state is unusable.
/// - Parameter ifNoCurrentRun: called instead of the error when no run is asked for and none
///   is current; the command then exits 0.
private func openRun<Read>(
    _ stateDirectory: StoreOpener, runID: String?, ifNoCurrentRun: (() -> Void)? = nil,
    forWriting: Bool = false, _ read: (ReadModel, String) async throws(StoreError) -> Read?
) async throws -> (OpenedStore, Read) {
    do {
        let store = try await (forWriting ? stateDirectory.openForWriting() : stateDirectory.openForReading())
        let reader = store.reader
        var id = runID
        if id == nil { id = try await reader.currentRunID() }
        if id == nil, let ifNoCurrentRun {
            store.close()
            ifNoCurrentRun()
            throw ExitCode.success
        }
        guard let id, let result = try await read(reader, id) else {
            store.close()
            if let runID {
                let known = (try? await reader.runs().map(\.id).suffix(5)) ?? []
                printError(
                    "jobrunner: no run '\(runID)' in \(stateDirectory.path); recent runs: \(known.joined(separator: ", "))"
                )
                throw ExitCode(ExitStatus.failed)
            }
            printError("jobrunner: no runs yet in \(stateDirectory.path)")
            throw ExitCode(ExitStatus.failed)
        }
        return (store, result)
    } catch let error as StoreError {
        printError("jobrunner: \(error)")
        throw ExitCode(ExitStatus.stateUnusable)
    }
}
