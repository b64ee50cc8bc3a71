import ArgumentParser
import Foundation
import Glibc
import JobRunnerCore
import JobRunnerLMDB
import JobRunnerShell

/// `jobrunner suspend PIPELINE`: one more level of suspension (SPEC 5.3).
struct SuspendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suspend",
        abstract: "Stop starting attempts in a pipeline (nested: each suspend needs a resume).",
        discussion:
            "Running attempts finish. Works with or without a runner; a live runner notices within a second.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The pipeline's name.") var pipeline: String

    func run() throws {
        let record = try adjustSuspension(pipeline, by: 1, global.stateDirectory)
        print("pipeline \(pipeline) suspended (count \(record.suspended))")
    }
}

/// `jobrunner resume PIPELINE`: one level of suspension less.
struct ResumeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume", abstract: "Undo one `suspend` of a pipeline; at zero, attempts start again.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The pipeline's name.") var pipeline: String

    func run() throws {
        let record = try adjustSuspension(pipeline, by: -1, global.stateDirectory)
        print(
            record.suspended == 0
                ? "pipeline \(pipeline) resumed"
                : "pipeline \(pipeline) still suspended (count \(record.suspended))")
    }
}

/// Changes a pipeline's persisted suspend count and pokes a live runner.
private func adjustSuspension(_ pipeline: String, by delta: Int, _ stateDirectory: StateDirectory) throws
    -> PipelineRecord
{
    do {
        try stateDirectory.prepare()
        let store = try stateDirectory.openStore()
        defer { store.close() }
        if delta < 0, (try store.pipelines()[pipeline]?.suspended ?? 0) == 0 {
            printError("jobrunner: pipeline \(pipeline) is not suspended")
            throw ExitCode(ExitStatus.failed)
        }
        let record = try store.updatePipeline(pipeline) { $0.suspended = max(0, $0.suspended + delta) }
        pokeRunner(stateDirectory)
        return record
    } catch let error as StoreError {
        printError("jobrunner: \(error)")
        throw ExitCode(ExitStatus.stateUnusable)
    }
}

/// Tells a live runner to look at the store now.
private func pokeRunner(_ stateDirectory: StateDirectory) {
    if let pid = stateDirectory.lockHolder() { kill(pid, SIGUSR1) }
}

/// `retry`, `skip` and `cancel`: one shape, three kinds.
protocol JobActionCommand: AsyncParsableCommand {
    static var kind: OperatorRequest.Kind { get }
    var global: GlobalOptions { get }
    var job: String { get }
}

extension JobActionCommand {
    func run() async throws {
        let stateDirectory = global.stateDirectory
        guard stateDirectory.hasDatabase else {
            printError("jobrunner: no runs yet in \(stateDirectory.path)")
            throw ExitCode(ExitStatus.failed)
        }
        let (store, snapshot) = try openRun(stateDirectory, runID: nil)
        defer { store.close() }
        guard snapshot.jobs[job] != nil else {
            printError("jobrunner: run \(snapshot.run.id) has no job '\(job)'")
            throw ExitCode(ExitStatus.failed)
        }
        let request = OperatorRequest(
            id: UInt64(Date().timeIntervalSince1970 * 1_000_000_000), kind: Self.kind, jobID: job,
            requestedAt: Date())
        do {
            if let pid = stateDirectory.lockHolder() {
                try await store.commit([.putRequest(runID: snapshot.run.id, request)])
                kill(pid, SIGUSR1)
                print("asked the runner (pid \(pid)) to \(Self.kind.rawValue) \(job)")
                return
            }
            // No runner: apply it here, holding the lock so that none starts meanwhile.
            let lock = try stateDirectory.lockForRunner()
            defer { withExtendedLifetime(lock) {} }
            guard let current = try store.snapshot(runID: snapshot.run.id) else {
                throw ExitCode(ExitStatus.failed)
            }
            let (result, decision) = OfflineOperator.apply(request, to: current, now: Date())
            switch result {
            case .refused(let why):
                printError("jobrunner: cannot \(Self.kind.rawValue) \(job): \(why)")
                throw ExitCode(ExitStatus.failed)
            case .applied(let what):
                try await store.commit(decision.changes)
                // A dead runner may have left the attempt's processes behind.
                for case .endAttempt(_, let jobID, let attempt, let pid, let startTime) in decision.effects {
                    await ProcessGroups().terminate(
                        Orphan(
                            runID: current.run.id, jobID: jobID, attempt: attempt, pid: pid,
                            startTime: startTime))
                }
                let reopened = decision.changes.contains { if case .putRun = $0 { true } else { false } }
                print(what + (reopened ? "; the next `jobrunner run` resumes run \(current.run.id)" : ""))
            case .terminating:
                throw ExitCode(ExitStatus.failed)
            }
        } catch let error as StoreError {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
    }
}

struct RetryCommand: JobActionCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract:
            "Give a failed, blocked or cancelled job, and the jobs it blocked, another chance in the current run."
    )
    static let kind = OperatorRequest.Kind.retry
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The job's id.") var job: String
}

struct SkipCommand: JobActionCommand {
    static let configuration = CommandConfiguration(
        commandName: "skip",
        abstract: "Mark a job skipped (ending its running attempt); the jobs that need it may go on.")
    static let kind = OperatorRequest.Kind.skip
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The job's id.") var job: String
}

struct CancelCommand: JobActionCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract:
            "Cancel a job: its running attempt's process group is terminated; the jobs that need it are blocked."
    )
    static let kind = OperatorRequest.Kind.cancel
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The job's id.") var job: String
}
