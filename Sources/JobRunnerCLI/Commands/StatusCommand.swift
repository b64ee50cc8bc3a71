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

    func run() throws {
        let stateDirectory = global.stateDirectory
        guard stateDirectory.hasDatabase, runID != nil || Self.hasCurrentRun(stateDirectory) else {
            if json {
                print("{\"run\": null, \"jobs\": [], \"pipelines\": []}")
            } else {
                print("no runs yet in \(stateDirectory.path)")
            }
            return
        }
        let (store, snapshot) = try openRun(stateDirectory, runID: runID)
        defer { store.close() }
        let pipelines: [String: PipelineRecord]
        let schedules: [String: ScheduleRecord]
        do {
            pipelines = try store.pipelines()
            schedules = try store.schedules()
        } catch {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
        var report = StatusReport(
            snapshot: snapshot, suspended: pipelines, runnerPID: stateDirectory.lockHolder())
        if snapshot.run.occurrenceOf == nil { report.schedules = schedules }
        print(json ? report.json() : report.table())
    }
}

extension StatusCommand {
    /// Whether the database names a current run; a database with only suspensions or periodic
    /// state has none yet. An unusable database answers true, so that opening it reports why.
    static func hasCurrentRun(_ stateDirectory: StateDirectory) -> Bool {
        guard let store = try? stateDirectory.openStore() else { return true }
        defer { store.close() }
        return (try? store.currentRunID()) != nil
    }
}

/// Opens the store beside any runner and reads a run (the current one when `runID` is nil).
func openRun(_ stateDirectory: StateDirectory, runID: String?) throws -> (LMDBQueueStore, RunSnapshot) {
    do {
        let store = try stateDirectory.openStore()
        let id = try runID ?? store.currentRunID()
        guard let id, let snapshot = try store.snapshot(runID: id) else {
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
        return (store, snapshot)
    } catch let error as StoreError {
        printError("jobrunner: \(error)")
        throw ExitCode(ExitStatus.stateUnusable)
    }
}
