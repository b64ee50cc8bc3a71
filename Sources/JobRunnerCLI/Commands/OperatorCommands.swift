import ArgumentParser
import Foundation
import Glibc
import JobRunnerCore
import JobRunnerShell
import Synchronization

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
        let record = try await adjustSuspension(pipeline, by: 1, global.stateDirectory)
        print("pipeline \(pipeline) suspended (count \(record.suspended))")
    }
}

/// `jobrunner resume PIPELINE`: one level of suspension less.
struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume", abstract: "Undo one `suspend` of a pipeline; at zero, attempts start again.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The pipeline's name.") var pipeline: String

    func run() async throws {
        let record = try await adjustSuspension(pipeline, by: -1, global.stateDirectory)
        print(
            record.suspended == 0
                ? "pipeline \(pipeline) resumed"
                : "pipeline \(pipeline) still suspended (count \(record.suspended))")
    }
}

/// Changes a pipeline's persisted suspend count and wakes a live runner. A name that no run
/// has used and no suspension holds is refused (a typo would otherwise suspend nothing).
private func adjustSuspension(_ pipeline: String, by delta: Int, _ stateDirectory: StoreOpener) async throws
    -> PipelineRecord
{
    do {
        let store = try await stateDirectory.openForWriting(preparing: true)
        defer { store.close() }
        let known = try await store.reader.knownPipelines()
        if !known.isEmpty, !known.contains(pipeline) {
            printError(
                "jobrunner: no pipeline '\(pipeline)'\(Suggestion.hint(for: pipeline, in: known.sorted()))"
                    + " (known: \(known.sorted().joined(separator: ", ")))")
            throw ExitCode(ExitStatus.invalid)
        }
        let notSuspended = "jobrunner: pipeline \(pipeline) is not suspended"
        if delta < 0, (try await store.reader.pipelines()[pipeline]?.suspended ?? 0) == 0 {
            printError(notSuspended)
            throw ExitCode(ExitStatus.failed)
        }
        // Checked again, and changed, in one transaction: of ten `resume`s racing after one
        // `suspend`, one finds the count at 1; the others find it at 0 and change nothing.
        let wasSuspended = Mutex(false)
        let record = try await store.store.updatePipeline(pipeline) { record in
            wasSuspended.withLock { $0 = record.suspended > 0 }
            if delta < 0 && record.suspended == 0 { return }
            record.suspended = max(0, record.suspended + delta)
        }
        if delta < 0, !wasSuspended.withLock({ $0 }) {
            printError(notSuspended)
            throw ExitCode(ExitStatus.failed)
        }
        await store.waker.wakeRunner()
        return record
    } catch let error as StoreError {
        printError("jobrunner: \(error)")
        throw ExitCode(ExitStatus.stateUnusable)
    }
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
    /// second: a runner takes them as soon as it is woken (it reads them then, and when it
    /// starts), but one whose run has just closed exits without reading them, and a finished
    /// run is never resumed, so they would be lost. False once they are taken. A runner that
    /// has not taken them after ``slowRunnerNotice`` is said to be waited for.
    static func runnerLeft(
        _ requests: [OperatorRequest], in runID: String, reader: ReadModel
    ) async throws -> Bool {
        let ours = Set(requests.map(\.id))
        let notice = ContinuousClock.now + slowRunnerNotice
        var told = false
        while true {
            // Read after the lock: a runner that took them and then ended leaves none stored.
            let gone = !(await reader.runnerWorks())
            let stored = try await reader.requests(runID: runID).contains { ours.contains($0.id) }
            if !stored { return false }
            if gone { return true }
            if !told && ContinuousClock.now >= notice {
                let pid = await reader.runnerPID().map { " (pid \($0))" } ?? ""
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
        let lock: any OperatorLockHold
        do {
            lock = try await stateDirectory.lock.lockForOperator {
                printError(
                    "jobrunner: waiting for another jobrunner command to finish with \(stateDirectory.path)")
            }
        } catch {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
        defer { withExtendedLifetime(lock) {} }
        let (store, snapshot) = try await openRun(stateDirectory, runID: nil, forWriting: true)
        defer { store.close() }
        let reader = store.reader
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
            // What this command changes itself it changes under a claim of its own, taken once
            // no runner works on the run (none can start while the operator lock is held).
            var claim: StoreClaim?
            func owned() async throws(StoreError) -> StoreClaim {
                if let claim { return claim }
                let taken = try await store.store.claim(owner: "operator \(getpid())")
                claim = taken
                return taken
            }
            if lock.runnerWorks {
                try await store.store.post(requests, runID: snapshot.run.id)
                // Woken, the runner reads them at once; it also reads them whenever it starts.
                await store.waker.wakeRunner()
                let runner = lock.runnerPID.map { "the runner (pid \($0))" } ?? "the runner"
                guard try await Self.runnerLeft(requests, in: snapshot.run.id, reader: reader) else {
                    print("asked \(runner) to \(verb) \(names.joined(separator: ", "))")
                    return
                }
                // It ended without them (its run had just closed): applied here instead, as no
                // runner can start while the operator lock is held.
                try await store.store.commit(
                    requests.map { .deleteRequest(runID: snapshot.run.id, id: $0.id) }, under: owned())
                print("\(runner) ended before it took the request; applying it here")
            }
            // No runner, and none starts while the operator lock is held: apply them here, in order.
            var refused = false
            // The run as the last request that changed it left it: reopened or closed.
            var changedRun: RunRecord?
            for request in requests {
                guard let current = try await reader.snapshot(runID: snapshot.run.id) else {
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
                    try await store.store.commit(decision.changes, under: owned())
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
