import ArgumentParser
import Foundation
import Glibc
import JobRunnerCore
import JobRunnerShell

/// `jobrunner suspend PIPELINE`: one more level of suspension (SPEC 5.3).
struct SuspendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suspend",
        abstract: "Stop starting attempts in a pipeline (nested: each suspend needs a resume).",
        discussion:
            "Running attempts finish. Works with or without a runner; a live runner is woken and notices at once."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The pipeline's name.") var pipeline: String

    func run() async throws {
        try await adjustSuspension(global.stateDirectory) { op, say in await op.suspend(pipeline, say: say) }
    }
}

/// `jobrunner resume PIPELINE`: one level of suspension less.
struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume", abstract: "Undo one `suspend` of a pipeline; at zero, attempts start again.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The pipeline's name.") var pipeline: String

    func run() async throws {
        try await adjustSuspension(global.stateDirectory) { op, say in await op.resume(pipeline, say: say) }
    }
}

/// Changes a pipeline's persisted suspend count through the ``Operator`` (creating the state
/// directory if need be) and exits as it says.
private func adjustSuspension(
    _ stateDirectory: StoreOpener,
    _ action: (Operator, (Operator.Line) -> Void) async -> Operator.Outcome
) async throws {
    let store: OpenedStore
    do {
        store = try await stateDirectory.openForWriting(preparing: true)
    } catch {
        printError("jobrunner: \(error)")
        throw ExitCode(ExitStatus.stateUnusable)
    }
    defer { store.close() }
    try exitAs(await action(stateDirectory.operator(store), printLine))
}

/// Prints a line of what an ``Operator`` action says, as the command prints it.
func printLine(_ line: Operator.Line) {
    switch line {
    case .message(let text): print(text)
    case .problem(let text), .notice(let text): printError("jobrunner: \(text)")
    }
}

/// Exits with an ``Operator`` action's status (returns when it is 0).
private func exitAs(_ outcome: Operator.Outcome) throws {
    if outcome != .done { throw ExitCode(outcome.exitStatus) }
}

/// `retry`, `skip` and `cancel`: one shape, three kinds, each for one job or several: a job of
/// the current run, or a periodic job's latest occurrence that ran (SPEC 5.12); `--run ID` picks
/// the run.
protocol JobActionCommand: AsyncParsableCommand {
    static var kind: OperatorRequest.Kind { get }
    var global: GlobalOptions { get }
    var jobs: [String] { get }
    /// The run to act on (`--run ID`); nil: the current run, or a periodic job's latest
    /// occurrence.
    var runID: String? { get }
    /// The jobs to act on besides those named (`retry --failed`), each with its run; nil: only
    /// those named.
    var defaultJobs: (@Sendable (RunSnapshot, [String: ScheduleRecord]) -> [(String, String)])? { get }
}

extension JobActionCommand {
    var defaultJobs: (@Sendable (RunSnapshot, [String: ScheduleRecord]) -> [(String, String)])? { nil }
}

extension JobActionCommand {
    func run() async throws {
        let stateDirectory = global.stateDirectory
        guard stateDirectory.hasDatabase else {
            printError("jobrunner: no runs yet in \(stateDirectory.path)")
            throw ExitCode(ExitStatus.failed)
        }
        let store: OpenedStore
        do {
            store = try await stateDirectory.openForWriting()
        } catch {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
        defer { store.close() }
        try exitAs(
            await stateDirectory.operator(store).act(
                Self.kind, jobs: jobs, runID: runID, defaultJobs: defaultJobs, say: printLine))
    }
}

/// What `--run` of `retry`, `skip` and `cancel` says.
private let runHelp =
    "Act on this run (one `jobrunner runs` lists) instead of the current one or a periodic job's latest occurrence."

struct RetryCommand: JobActionCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract:
            "Give failed, blocked or cancelled jobs, and the jobs they blocked, another chance in the current run."
    )
    static let kind = OperatorRequest.Kind.retry
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The jobs' ids.") var jobs: [String] = []
    @Flag(
        help:
            "Retry every failed or cancelled job of the run, and each periodic job whose latest occurrence failed."
    ) var failed = false
    @Option(name: .customLong("run"), help: ArgumentHelp(runHelp, valueName: "id")) var runID: String?

    func validate() throws {
        if jobs.isEmpty && !failed { throw ValidationError("name the jobs to retry, or pass --failed") }
    }

    var defaultJobs: (@Sendable (RunSnapshot, [String: ScheduleRecord]) -> [(String, String)])? {
        guard failed else { return nil }
        let explicitRun = runID != nil
        return { snapshot, schedules in
            let oneShot = snapshot.run.jobIDs.filter { id in
                snapshot.jobs[id].map { $0.state == .failed || $0.state == .cancelled } ?? false
            }.map { ($0, snapshot.run.id) }
            // A failed occurrence (cancelled and blocked ones fail theirs too) of each periodic
            // job, its latest; not with `--run`, which names one run.
            guard !explicitRun else { return oneShot }
            let periodic = schedules.values.sorted { $0.jobID < $1.jobID }.compactMap { record in
                record.lastResult == .failed ? record.lastRunID.map { (record.jobID, $0) } : nil
            }
            return oneShot + periodic
        }
    }
}

struct SkipCommand: JobActionCommand {
    static let configuration = CommandConfiguration(
        commandName: "skip",
        abstract: "Mark jobs skipped (ending their running attempts); the jobs that need them may go on.")
    static let kind = OperatorRequest.Kind.skip
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The jobs' ids.") var jobs: [String]
    @Option(name: .customLong("run"), help: ArgumentHelp(runHelp, valueName: "id")) var runID: String?
}

struct CancelCommand: JobActionCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract:
            "Cancel jobs: their running attempts' process groups are terminated; the jobs that need them are blocked."
    )
    static let kind = OperatorRequest.Kind.cancel
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The jobs' ids.") var jobs: [String]
    @Option(name: .customLong("run"), help: ArgumentHelp(runHelp, valueName: "id")) var runID: String?
}

/// `jobrunner trigger JOB…`: an occurrence of each periodic job now, outside its schedule
/// (SPEC 5.12), through the ``Operator`` (Core's ``PeriodicTrigger``).
struct TriggerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trigger",
        abstract: "Start an occurrence of periodic jobs now, outside their schedules.",
        discussion:
            "Recorded like any occurrence (`\"manual\": true` in `runs --json`), as `overlap` allows: under `skip` it is refused while an occurrence runs. A live `serve` starts it within a second; with no runner it is stored and the next `serve` or `run` starts it first. The schedule does not move."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The periodic jobs' ids.") var jobs: [String]

    func run() async throws {
        let stateDirectory = global.stateDirectory
        guard stateDirectory.hasDatabase else {
            printError(
                "jobrunner: no periodic job has been scheduled in \(stateDirectory.path) yet; start `jobrunner serve` first"
            )
            throw ExitCode(ExitStatus.failed)
        }
        let store: OpenedStore
        do {
            store = try await stateDirectory.openForWriting()
        } catch {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
        defer { store.close() }
        try exitAs(await stateDirectory.operator(store).trigger(jobs, say: printLine))
    }
}
