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
        let store = try stateDirectory.openForWriting(preparing: true)
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
        let wasSuspended = Locked(false)
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
    /// The jobs to act on when none is named (`retry --failed`), each with its run; nil: naming
    /// one is required.
    func defaultJobs(in snapshot: RunSnapshot, schedules: [String: ScheduleRecord]) -> [(String, String)]?
}

extension JobActionCommand {
    func defaultJobs(in snapshot: RunSnapshot, schedules: [String: ScheduleRecord]) -> [(String, String)]? {
        nil
    }
}

extension JobActionCommand {
    /// Whether the runner went away with `requests` still stored (under `key`), looked at a few
    /// times a second: a runner takes them as soon as it is woken (it reads them then, and when
    /// it starts), but one whose run has just closed exits without reading them, and a finished
    /// run is never resumed, so they would be lost. False once they are taken. A runner that
    /// has not taken them after ``slowRunnerNotice`` is said to be waited for.
    static func runnerLeft(
        _ requests: [OperatorRequest], in key: String, reader: ReadModel
    ) async throws -> Bool {
        let ours = Set(requests.map(\.id))
        let notice = ContinuousClock.now + slowRunnerNotice
        var told = false
        while true {
            // Read after the lock: a runner that took them and then ended leaves none stored.
            let gone = !(await reader.runnerWorks())
            let stored = try await reader.requests(runID: key).contains { ours.contains($0.id) }
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
        let (store, snapshot) = try await openRun(stateDirectory, runID: runID, forWriting: true)
        defer { store.close() }
        do {
            let targets = try await self.targets(in: snapshot, reader: store.reader)
            if targets.isEmpty {
                print("run \(snapshot.run.id) has no failed or cancelled job to \(Self.kind.rawValue)")
                return
            }
            var refused = false
            // Claimed once, by the first run this command changes itself.
            let claim = ClaimOnce(store: store.store)
            for (runID, names) in targets {
                let target =
                    runID == snapshot.run.id ? snapshot : try await store.reader.snapshot(runID: runID)
                guard let target else { throw ExitCode(ExitStatus.failed) }
                if try await act(on: names, in: target, store: store, lock: lock, claim: claim) {
                    refused = true
                }
            }
            if refused { throw ExitCode(ExitStatus.failed) }
        } catch let error as StoreError {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
    }

    /// The runs to act on, each with the jobs named in it, in the order first named: a job of
    /// `snapshot` (the current run, or `--run ID`), else a periodic job's latest occurrence that
    /// ran. A name that is neither exits 1 before anything is applied.
    private func targets(in snapshot: RunSnapshot, reader: ReadModel) async throws -> [(String, [String])] {
        var named: [(String, String)] = jobs.map { ($0, "") }
        let schedules = try await reader.schedules()
        if let defaults = defaultJobs(in: snapshot, schedules: schedules) {
            named += defaults.filter { name, _ in !jobs.contains(name) }
        }
        var seen = Set<String>()
        named = named.filter { seen.insert($0.0).inserted }
        var order: [String] = []
        var byRun: [String: [String]] = [:]
        for (name, given) in named {
            var runID = given
            if runID.isEmpty {
                if snapshot.jobs[name] != nil {
                    runID = snapshot.run.id
                } else if self.runID == nil, let (latest, ran) = try await reader.latestOccurrence(of: name),
                    ran
                {
                    runID = latest.id
                } else {
                    printError(
                        "jobrunner: " + (await noJob(name, in: snapshot, periodic: Array(schedules.keys))))
                    throw ExitCode(ExitStatus.failed)
                }
            }
            if byRun[runID] == nil { order.append(runID) }
            byRun[runID, default: []].append(name)
        }
        return order.map { ($0, byRun[$0] ?? []) }
    }

    /// What a name that is no job of the run nor a periodic job with an occurrence is.
    private func noJob(_ name: String, in snapshot: RunSnapshot, periodic: [String]) async -> String {
        // A matrix job's own id, perhaps: its jobs are listed, not acted on (the run does not
        // say which ids are a matrix's).
        let matches = MatrixIDs.jobs(of: name, in: snapshot.run.jobIDs)
        if !matches.isEmpty {
            return "run \(snapshot.run.id) has "
                + MatrixIDs.choice(of: name, among: matches, command: Self.kind.rawValue)
        }
        if runID != nil {
            return "run \(snapshot.run.id) has no job '\(name)'"
                + Suggestion.hint(for: name, in: snapshot.run.jobIDs)
        }
        if periodic.contains(name) { return "\(name) has no occurrence that ran yet" }
        return "no job '\(name)'" + Suggestion.hint(for: name, in: snapshot.run.jobIDs + periodic.sorted())
    }

    /// Applies the requests for `names` to one run: through the runner at work, else here.
    /// Returns whether one was refused.
    private func act(
        on names: [String], in snapshot: RunSnapshot, store: OpenedStore, lock: any OperatorLockHold,
        claim: ClaimOnce
    ) async throws -> Bool {
        let reader = store.reader
        let verb = Self.kind.rawValue
        let runID = snapshot.run.id
        // An occurrence's requests go where every runner looks, whether it runs or has finished.
        let occurrence = snapshot.run.occurrenceOf != nil
        let key = occurrence ? OperatorRequest.periodicRequests : runID
        let base = UInt64(Date().timeIntervalSince1970 * 1_000_000_000)
        let requests = names.enumerated().map { index, name in
            OperatorRequest(
                id: base + UInt64(index), kind: Self.kind, jobID: name, requestedAt: Date(),
                runID: occurrence ? runID : nil)
        }
        let which = occurrence ? " (occurrence \(runID))" : ""
        if lock.runnerWorks {
            try await store.store.post(requests, runID: key)
            // Woken, the runner reads them at once; it also reads them whenever it starts.
            await store.waker.wakeRunner()
            let runner = lock.runnerPID.map { "the runner (pid \($0))" } ?? "the runner"
            guard try await Self.runnerLeft(requests, in: key, reader: reader) else {
                print("asked \(runner) to \(verb) \(names.joined(separator: ", "))\(which)")
                return false
            }
            // It ended without them (its run had just closed): applied here instead, as no
            // runner can start while the operator lock is held.
            try await store.store.commit(
                requests.map { .deleteRequest(runID: key, id: $0.id) }, under: claim.get())
            print("\(runner) ended before it took the request; applying it here")
        }
        // No runner, and none starts while the operator lock is held: apply them here, in order.
        var refused = false
        // The run as the last request that changed it left it: reopened or closed.
        var changedRun: RunRecord?
        for request in requests {
            guard let current = try await reader.snapshot(runID: runID) else {
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
                printError("jobrunner: cannot \(verb) \(request.jobID)\(which): \(why)")
                refused = true
            case .applied(let what):
                try await store.store.commit(decision.changes, under: claim.get())
                // A dead runner may have left the attempt's processes behind.
                for case .endAttempt(_, let jobID, let attempt, let pid, let startTime) in decision.effects {
                    await ProcessGroups().terminate(
                        Orphan(
                            runID: current.run.id, jobID: jobID, attempt: attempt, pid: pid,
                            startTime: startTime))
                }
                for case .putRun(let run) in decision.changes { changedRun = run }
                print(occurrence ? "occurrence \(runID): \(what)" : what)
            case .terminating:
                refused = true
            }
        }
        if let changedRun {
            print(
                changedRun.state.isFinal
                    ? "run \(changedRun.id) \(changedRun.state.rawValue): every job is final"
                    : occurrence
                        ? "the next `jobrunner serve` or `jobrunner run` resumes occurrence \(changedRun.id)"
                        : "the next `jobrunner run` resumes run \(changedRun.id)")
        }
        return refused
    }
}

/// The claim an operator command commits under, taken the first time it is needed, once no
/// runner works on the store (none can start while the operator lock is held).
final class ClaimOnce: @unchecked Sendable {
    private let store: any QueueStore
    private var claim: StoreClaim?

    init(store: any QueueStore) { self.store = store }

    func get() async throws(StoreError) -> StoreClaim {
        if let claim { return claim }
        let taken = try await store.claim(owner: "operator \(getpid())")
        claim = taken
        return taken
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

    func defaultJobs(in snapshot: RunSnapshot, schedules: [String: ScheduleRecord]) -> [(String, String)]? {
        guard failed else { return nil }
        let oneShot = snapshot.run.jobIDs.filter { id in
            snapshot.jobs[id].map { $0.state == .failed || $0.state == .cancelled } ?? false
        }.map { ($0, snapshot.run.id) }
        // A failed occurrence (cancelled and blocked ones fail theirs too) of each periodic job,
        // its latest; not with `--run`, which names one run.
        guard runID == nil else { return oneShot }
        let periodic = schedules.values.sorted { $0.jobID < $1.jobID }.compactMap { record in
            record.lastResult == .failed ? record.lastRunID.map { (record.jobID, $0) } : nil
        }
        return oneShot + periodic
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
/// (SPEC 5.12); the logic is Core's ``PeriodicTrigger``.
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
        do {
            let store = try stateDirectory.openForWriting()
            defer { store.close() }
            let reader = store.reader
            var seen = Set<String>()
            let names = jobs.filter { seen.insert($0).inserted }
            var oneShot: [String] = []
            if let current = try await reader.currentRunID() {
                oneShot = try await reader.run(current)?.jobIDs ?? []
            }
            let periodic = Array(try await reader.schedules().keys)
            if let problem = PeriodicTrigger.problem(with: names, periodic: periodic, oneShot: oneShot) {
                printError("jobrunner: \(problem)")
                throw ExitCode(ExitStatus.failed)
            }
            let outcomes = try await PeriodicTrigger.trigger(names, reader: reader, waker: store.waker) {
                pid in
                printError(
                    "jobrunner: waiting for the runner\(pid.map { " (pid \($0))" } ?? "") to take the request"
                )
            }
            var refused = false
            for (job, outcome) in outcomes {
                switch outcome {
                case .started(let runID):
                    print("triggered \(job): occurrence \(runID)")
                case .queued(let runID):
                    print("triggered \(job): occurrence \(runID) waits behind the running one")
                case .stored(let runID):
                    print(
                        "stored: no runner works on \(stateDirectory.path); the next `jobrunner serve` or `jobrunner run` starts \(job) first (occurrence \(runID))"
                    )
                case .refused(let why):
                    printError("jobrunner: cannot trigger \(job): \(why)")
                    refused = true
                }
            }
            if refused { throw ExitCode(ExitStatus.failed) }
        } catch let error as StoreError {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
    }
}
