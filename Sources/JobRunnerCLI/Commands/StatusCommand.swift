import ArgumentParser
import Foundation
import JobRunnerCore
import JobRunnerLMDB

/// `jobrunner status [--json] [--run ID]`.
struct StatusCommand: ParsableCommand {
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
            "List every job. Without it, a run of more than \(StatusReport.fullListLimit) jobs lists only the jobs that did not succeed and counts the others."
        ))
    var all = false

    func run() throws {
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
        let (store, overview) = try openOverview(
            stateDirectory, runID: runID, all: all || json, ifNoCurrentRun: noRuns)
        defer { store.close() }
        let pipelines: [String: PipelineRecord]
        let schedules: [String: ScheduleRecord]
        let current: String?
        do {
            pipelines = try store.pipelines()
            schedules = try store.schedules()
            current = try store.currentRunID()
        } catch {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
        var report = StatusReport(
            overview: overview, suspended: pipelines, runnerPID: stateDirectory.lockHolder(),
            describing: !json)
        report.schedules = schedules
        if overview.run.occurrenceOf == nil { report.replaced = current != overview.run.id }
        if json {
            report.writeJSON { bytes in writeBytes(STDOUT_FILENO, bytes) }
        } else {
            print(report.table())
        }
    }
}

/// Opens the store beside any runner and reads what `status` shows of a run (the current one
/// when `runID` is nil): every job's state, and the records of the jobs it lists.
func openOverview(
    _ stateDirectory: StateDirectory, runID: String?, all: Bool, ifNoCurrentRun: (() -> Void)? = nil
) throws -> (LMDBQueueStore, RunOverview) {
    try openRun(stateDirectory, runID: runID, ifNoCurrentRun: ifNoCurrentRun) {
        store, id throws(StoreError) in
        try store.overview(
            runID: id, listing: { StatusReport.lists($0, jobCount: $1.jobIDs.count, all: all) },
            withOutputs: all)
    }
}

/// Opens the store beside any runner and reads a run (the current one when `runID` is nil).
/// - Parameter forWriting: opens the store to write to it too; else it is opened read-only
///   (``StateDirectory/openStoreForReading()``).
func openRun(_ stateDirectory: StateDirectory, runID: String?, forWriting: Bool = false) throws -> (
    LMDBQueueStore, RunSnapshot
) {
    try openRun(stateDirectory, runID: runID, forWriting: forWriting) { store, id throws(StoreError) in
        try store.snapshot(runID: id)
    }
}

/// Opens the store beside any runner and reads what `read` reads of a run (the current one
/// when `runID` is nil); says so and exits when there is no such run or the state is unusable.
/// - Parameter ifNoCurrentRun: called instead of the error when no run is asked for and none
///   is current; the command then exits 0.
private func openRun<Read>(
    _ stateDirectory: StateDirectory, runID: String?, ifNoCurrentRun: (() -> Void)? = nil,
    forWriting: Bool = false, _ read: (LMDBQueueStore, String) throws(StoreError) -> Read?
) throws -> (LMDBQueueStore, Read) {
    do {
        let store = try forWriting ? stateDirectory.openStore() : stateDirectory.openStoreForReading()
        let id = try runID ?? store.currentRunID()
        if id == nil, let ifNoCurrentRun {
            store.close()
            ifNoCurrentRun()
            throw ExitCode.success
        }
        guard let id, let result = try read(store, id) else {
            store.close()
            if let runID {
                let known = (try? store.runs().map(\.id).suffix(5)) ?? []
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
