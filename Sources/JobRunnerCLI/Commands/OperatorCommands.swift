import ArgumentParser
import Foundation
import Glibc
import JobRunnerCore
import JobRunnerLMDB
import JobRunnerShell
import Synchronization

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

/// Changes a pipeline's persisted suspend count and pokes a live runner. A name that no run
/// has used and no suspension holds is refused (a typo would otherwise suspend nothing).
private func adjustSuspension(_ pipeline: String, by delta: Int, _ stateDirectory: StateDirectory) throws
    -> PipelineRecord
{
    do {
        try stateDirectory.prepare()
        let store = try stateDirectory.openStore()
        defer { store.close() }
        let known = try knownPipelines(store)
        if !known.isEmpty, !known.contains(pipeline) {
            printError(
                "jobrunner: no pipeline '\(pipeline)'\(Suggestion.hint(for: pipeline, in: known.sorted()))"
                    + " (known: \(known.sorted().joined(separator: ", ")))")
            throw ExitCode(ExitStatus.invalid)
        }
        let notSuspended = "jobrunner: pipeline \(pipeline) is not suspended"
        if delta < 0, (try store.pipelines()[pipeline]?.suspended ?? 0) == 0 {
            printError(notSuspended)
            throw ExitCode(ExitStatus.failed)
        }
        // Checked again, and changed, in one transaction: of ten `resume`s racing after one `suspend`,
        // one finds the count at 1; the others find it at 0 and change nothing.
        let wasSuspended = Mutex(false)
        let record = try store.updatePipeline(pipeline) { record in
            wasSuspended.withLock { $0 = record.suspended > 0 }
            if delta < 0 && record.suspended == 0 { return }
            record.suspended = max(0, record.suspended + delta)
        }
        if delta < 0, !wasSuspended.withLock({ $0 }) {
            printError(notSuspended)
            throw ExitCode(ExitStatus.failed)
        }
        pokeRunner(stateDirectory)
        return record
    } catch let error as StoreError {
        printError("jobrunner: \(error)")
        throw ExitCode(ExitStatus.stateUnusable)
    }
}

/// The pipelines of the recent runs and those with a stored suspension; empty before the first run.
private func knownPipelines(_ store: LMDBQueueStore) throws -> Set<String> {
    var names = Set(try store.pipelines().filter { $0.value.suspended > 0 }.keys)
    for run in try store.runs().suffix(20) {
        names.formUnion(run.pipelineLimits.keys)
    }
    return names
}

/// Tells a live runner to look at the store now.
private func pokeRunner(_ stateDirectory: StateDirectory) {
    if let pid = stateDirectory.lockHolder() { kill(pid, SIGUSR1) }
}

/// `retry`, `skip` and `cancel`: one shape, three kinds, each for one job or several.
protocol JobActionCommand: AsyncParsableCommand {
    static var kind: OperatorRequest.Kind { get }
    var global: GlobalOptions { get }
    var jobs: [String] { get }
    /// The jobs to act on when none is named (`retry --failed`); nil: naming one is required.
    func defaultJobs(in snapshot: RunSnapshot) -> [String]?
}

extension JobActionCommand {
    func defaultJobs(in snapshot: RunSnapshot) -> [String]? { nil }
}

extension JobActionCommand {
    /// Whether the runner went away with `requests` still stored, looked at a few times a
    /// second: a runner takes them within a second (it reads the store every second, and at
    /// once when signalled), but one whose run has just closed exits without reading them, and
    /// a finished run is never resumed, so they would be lost. False once they are taken. A
    /// runner that has not taken them after ``slowRunnerNotice`` is said to be waited for.
    static func runnerLeft(
        _ requests: [OperatorRequest], in runID: String, store: LMDBQueueStore, stateDirectory: StateDirectory
    ) async throws -> Bool {
        let ours = Set(requests.map(\.id))
        let notice = ContinuousClock.now + slowRunnerNotice
        var told = false
        while true {
            // Read after the lock: a runner that took them and then ended leaves none stored.
            let gone = !stateDirectory.runnerHoldsLock()
            let stored = try store.requests(runID: runID).contains { ours.contains($0.id) }
            if !stored { return false }
            if gone { return true }
            if !told && ContinuousClock.now >= notice {
                let pid = stateDirectory.lockHolder().map { " (pid \($0))" } ?? ""
                printError("jobrunner: waiting for the runner\(pid) to take the request")
                told = true
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// When an operator command says it still waits for the runner.
    static var slowRunnerNotice: Duration { .seconds(3) }

    func run() async throws {
        let stateDirectory = global.stateDirectory
        guard stateDirectory.hasDatabase else {
            printError("jobrunner: no runs yet in \(stateDirectory.path)")
            throw ExitCode(ExitStatus.failed)
        }
        // Taken first: what follows is decided on the run as it is once no other operator
        // command changes it and no runner can start.
        let lock: OperatorLock
        do {
            lock = try stateDirectory.lockForOperator {
                printError(
                    "jobrunner: waiting for another jobrunner command to finish with \(stateDirectory.path)")
            }
        } catch {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
        defer { withExtendedLifetime(lock) {} }
        let (store, snapshot) = try openRun(stateDirectory, runID: nil, forWriting: true)
        defer { store.close() }
        let verb = Self.kind.rawValue
        var names = jobs
        if let defaults = defaultJobs(in: snapshot) {
            names += defaults.filter { !names.contains($0) }
            if names.isEmpty {
                print("run \(snapshot.run.id) has no failed or cancelled job to \(verb)")
                return
            }
        }
        var seen = Set<String>()
        names = names.filter { seen.insert($0).inserted }
        for name in names where snapshot.jobs[name] == nil {
            // A matrix job's own id, perhaps: its jobs are listed, not acted on (the run does
            // not say which ids are a matrix's).
            let matches = MatrixIDs.jobs(of: name, in: snapshot.run.jobIDs)
            printError(
                "jobrunner: run \(snapshot.run.id) "
                    + (matches.isEmpty
                        ? "has no job '\(name)'" + Suggestion.hint(for: name, in: snapshot.run.jobIDs)
                        : "has " + MatrixIDs.choice(of: name, among: matches, command: verb)))
            throw ExitCode(ExitStatus.failed)
        }
        let base = UInt64(Date().timeIntervalSince1970 * 1_000_000_000)
        let requests = names.enumerated().map { index, name in
            OperatorRequest(id: base + UInt64(index), kind: Self.kind, jobID: name, requestedAt: Date())
        }
        do {
            if lock.runnerWorks {
                try await store.commit(requests.map { .putRequest(runID: snapshot.run.id, $0) })
                // The signal only hurries it: a runner reads the store every second anyway.
                if let pid = lock.runnerPID { kill(pid, SIGUSR1) }
                let runner = lock.runnerPID.map { "the runner (pid \($0))" } ?? "the runner"
                guard
                    try await Self.runnerLeft(
                        requests, in: snapshot.run.id, store: store, stateDirectory: stateDirectory)
                else {
                    print("asked \(runner) to \(verb) \(names.joined(separator: ", "))")
                    return
                }
                // It ended without them (its run had just closed): applied here instead, as no
                // runner can start while the operator lock is held.
                try await store.commit(requests.map { .deleteRequest(runID: snapshot.run.id, id: $0.id) })
                print("\(runner) ended before it took the request; applying it here")
            }
            // No runner, and none starts while the operator lock is held: apply them here, in order.
            var refused = false
            // The run as the last request that changed it left it: reopened or closed.
            var changedRun: RunRecord?
            for request in requests {
                guard let current = try store.snapshot(runID: snapshot.run.id) else {
                    throw ExitCode(ExitStatus.failed)
                }
                let (result, decision) = OfflineOperator.apply(request, to: current, now: Date())
                switch result {
                case .refused(let why):
                    // An earlier job of the same command reopened this one already (the jobs
                    // it blocked come with it).
                    if Self.kind == .retry, snapshot.jobs[request.jobID]?.state.isFinal == true,
                        current.jobs[request.jobID]?.state.isFinal == false
                    {
                        print("\(request.jobID) gets another chance, with any jobs it blocked")
                        continue
                    }
                    printError("jobrunner: cannot \(verb) \(request.jobID): \(why)")
                    refused = true
                case .applied(let what):
                    try await store.commit(decision.changes)
                    // A dead runner may have left the attempt's processes behind.
                    for case .endAttempt(_, let jobID, let attempt, let pid, let startTime) in decision
                        .effects
                    {
                        await ProcessGroups().terminate(
                            Orphan(
                                runID: current.run.id, jobID: jobID, attempt: attempt, pid: pid,
                                startTime: startTime))
                    }
                    for case .putRun(let run) in decision.changes { changedRun = run }
                    print(what)
                case .terminating:
                    refused = true
                }
            }
            if let changedRun {
                print(
                    changedRun.state.isFinal
                        ? "run \(changedRun.id) \(changedRun.state.rawValue): every job is final"
                        : "the next `jobrunner run` resumes run \(changedRun.id)")
            }
            if refused { throw ExitCode(ExitStatus.failed) }
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
            "Give failed, blocked or cancelled jobs, and the jobs they blocked, another chance in the current run."
    )
    static let kind = OperatorRequest.Kind.retry
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The jobs' ids.") var jobs: [String] = []
    @Flag(help: "Retry every failed or cancelled job of the run.") var failed = false

    func validate() throws {
        if jobs.isEmpty && !failed { throw ValidationError("name the jobs to retry, or pass --failed") }
    }

    func defaultJobs(in snapshot: RunSnapshot) -> [String]? {
        guard failed else { return nil }
        return snapshot.run.jobIDs.filter { id in
            snapshot.jobs[id].map { $0.state == .failed || $0.state == .cancelled } ?? false
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
}
