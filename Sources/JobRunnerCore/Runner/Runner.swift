import Foundation
import Logging
import Synchronization

/// Options of one `run`.
public struct RunnerOptions: Sendable {
    /// Global cap on running attempts (`--jobs N`); nil is unlimited beyond pipeline limits.
    public var maxRunning: Int?
    /// Start a fresh run even when an interrupted one of the same jobs could be resumed.
    public var startNewRun: Bool
    /// Where attempt logs go: `<logDirectory>/<run>/<job>/<attempt>.log`.
    public var logDirectory: String
    /// `logDirectory` as attempt records store it (relative to the state directory); nil: as is.
    public var storedLogDirectory: String?
    /// Recorded in the run, so `status` can say which process works on it.
    public var runnerPID: Int32
    /// How often the runner looks at the store for operator requests and suspensions when
    /// nobody pokes it (`poke()` is the fast path); nil: only when poked.
    public var storeCheckInterval: Duration?
    /// Keep scheduling periodic jobs until stopped (`serve`); otherwise the run ends once every
    /// one-shot job and every occurrence that was due when it started is final (`run`).
    public var serve: Bool
    /// When decisions are handed to the store (``CommitPacing``).
    public var commitPacing: CommitPacing.Policy
    /// At most this many occurrence runs of periodic jobs under way at once
    /// (``ConductorOptions/maxOccurrenceRuns``).
    public var maxOccurrenceRuns: Int? = ConductorOptions.defaultMaxOccurrenceRuns
    /// The secrets masked in the events each commit keeps (``Decision/reports(masking:)``), as
    /// the observer masks them for `--events`.
    public var secrets: Secrets?

    public init(
        maxRunning: Int? = nil, startNewRun: Bool = false, logDirectory: String, runnerPID: Int32,
        storeCheckInterval: Duration? = nil, serve: Bool = false,
        commitPacing: CommitPacing.Policy = .adaptive
    ) {
        self.serve = serve
        self.commitPacing = commitPacing
        self.maxRunning = maxRunning
        self.startNewRun = startNewRun
        self.logDirectory = logDirectory
        self.runnerPID = runnerPID
        self.storeCheckInterval = storeCheckInterval
    }
}

/// How a `run` ended.
public struct RunSummary: Sendable, Hashable {
    public var runID: String
    /// `succeeded`, `failed`, or `stopped` after a signal.
    public var state: RunState
    /// Whether an interrupted run was resumed rather than a new one started.
    public var resumed: Bool
    /// The signal that stopped the run, when it was stopped.
    public var stopSignal: Int32?
    /// How many jobs ended in each state, as `status` shows them (``Scheduler/shownCounts``).
    public var counts: [JobState: Int]
    /// How many periodic occurrences this runner ran (or found blocked) ended failed.
    public var failedOccurrences: Int = 0
    /// The periodic occurrences under way that the stop left `stopped`, by date: the next
    /// `serve` or `run` resumes them.
    public var stoppedOccurrences: [Occurrence] = []
    /// The jobs that ended badly (``Scheduler/troubledJobs``), in load order.
    public var troubled: [JobRecord] = []

    /// How many jobs failed with `allowFailure`.
    public var allowedFailures: Int { troubled.filter(\.isAllowedFailure).count }

    public init(
        runID: String, state: RunState, resumed: Bool, stopSignal: Int32? = nil,
        counts: [JobState: Int] = [:],
        failedOccurrences: Int = 0, stoppedOccurrences: [Occurrence] = [], troubled: [JobRecord] = []
    ) {
        self.stoppedOccurrences = stoppedOccurrences
        self.runID = runID
        self.state = state
        self.resumed = resumed
        self.stopSignal = stopSignal
        self.counts = counts
        self.failedOccurrences = failedOccurrences
        self.troubled = troubled
    }
}

/// Runs a workload to the end: a pump between the ``Scheduler``, which decides, the
/// ``QueueStore``, which makes each decision durable, and the handlers, probes and constraint
/// commands, which perform the effects and whose results go back to the scheduler.
///
/// One task owns the scheduler; attempts, store completions, timers and stop requests reach it
/// as messages on one stream, so no decision races another and no lock is held across an await.
public final class Runner: Sendable {
    /// A message to the pump.
    enum Message: Sendable {
        /// An input for the scheduler of one run.
        case input(run: String, SchedulerInput)
        /// A side task's result (a constraint command's, for its run; a probe's, for every run
        /// when `run` is nil), from the side task with this number.
        case sideTaskEnded(Int, run: String?, SchedulerInput)
        /// An input for every run's scheduler (connectivity).
        case broadcast(SchedulerInput)
        case durable(Result<Void, StoreError>, [Effect])
        case wake
        case poke
        case stop(Int32)
        /// New definitions (`serve` reloading its files) and the periodic jobs among them.
        case reload(Workload, [Timetable.Job])
        /// A `notify:` hook's delivery (side task `Int`) ended.
        case notified(Int, OperatorRequest, failure: String?, interrupted: Bool)
        /// The requests about periodic jobs as the store holds them now, with the finished
        /// occurrence runs they name.
        case periodicRequests([OperatorRequest], finished: [String: RunSnapshot])
        /// The wait of ``CommitPacing`` for fresh attempts is over: the alarm with this number
        /// rang.
        case paced(Int)
        /// The runner's hold on the store no longer stands (its state directory was deleted or
        /// replaced, a lease was lost): it stops, and the run fails with this error.
        case lost(StoreError)
    }

    let workload: Workload
    /// The periodic jobs of the workload, as the timetable sees them.
    let periodic: [Timetable.Job]
    /// The store, read and written through ``store`` once the runner holds its claim.
    private let queueStore: any QueueStore
    /// The claim the caller took for the runner, if it took one; else the runner takes one.
    private let givenClaim: StoreClaim?
    /// The claim the runner's commits are made under, once taken.
    private let heldClaim = Locked<StoreClaim?>(nil)
    /// The outputs of periodic jobs' latest succeeded occurrences that earlier runners ran, read
    /// before the loop begins: what the occurrences that need them receive (SPEC 5.8).
    private let earlierOutputs = Locked<[JobInRun: [String: String]]>([:])
    let handler: any JobHandler
    let clock: any RunnerClock
    let observer: any RunObserver
    let orphans: (any OrphanTerminator)?
    let probe: (any ConnectivityProbe)?
    let constraintRunner: (any ConstraintRunner)?
    /// Runs `notify:` hooks; nil: hooks that fall due are stored and left for a runner that can.
    let notifier: (any NotificationDeliverer)?
    let options: RunnerOptions
    let logger: Logger
    /// The runner lock held for this runner, checked at each store check (``RunnerLockHold/verify()``).
    let lock: (any RunnerLockHold)?
    private let randomSeed: UInt64?
    let mailbox = Mailbox<Message>()
    /// The signal of a stop request (0: none), looked at before each message: a stop must not
    /// wait behind thousands of queued messages (a burst of occurrences ending, say).
    private let stopRequest = Atomic<Int32>(0)

    /// - Parameters:
    ///   - randomSeed: a seed for backoff jitter; nil uses the system's generator.
    ///   - orphans: ends processes a dead runner left behind; nil when handlers spawn none.
    ///   - connectivity: says whether the machine is online, every `workload.connectivity.interval`;
    ///     nil: always online. Not asked at all when no job needs the internet.
    ///   - constraints: runs constraints' `check` and `satisfy`; nil: every constraint holds.
    ///   - claim: the claim to commit under, taken by the caller (the command line takes it
    ///     once it holds the runner lock); nil: ``run()`` takes one from the store.
    public init(
        workload: Workload, store: any QueueStore, claim: StoreClaim? = nil, handler: any JobHandler,
        clock: any RunnerClock = SystemClock(),
        observer: any RunObserver, orphans: (any OrphanTerminator)? = nil,
        connectivity: (any ConnectivityProbe)? = nil, constraints: (any ConstraintRunner)? = nil,
        options: RunnerOptions, logger: Logger, randomSeed: UInt64? = nil, periodic: [Timetable.Job] = [],
        lock: (any RunnerLockHold)? = nil, notifier: (any NotificationDeliverer)? = nil
    ) {
        self.notifier = notifier
        self.lock = lock
        self.periodic = periodic
        self.probe = connectivity
        self.constraintRunner = constraints
        self.workload = workload
        self.queueStore = store
        self.givenClaim = claim
        self.handler = handler
        self.clock = clock
        self.observer = observer
        self.orphans = orphans
        self.options = options
        self.logger = logger
        self.randomSeed = randomSeed
    }

    /// Asks the runner to stop cleanly: no new attempts, running ones are ended and recorded
    /// `interrupted`. Safe to call from any thread, any number of times.
    public func requestStop(signal: Int32) {
        _ = stopRequest.compareExchange(expected: 0, desired: signal, ordering: .relaxed)
        mailbox.yield(.stop(signal))
    }

    /// Takes new definitions while serving (SPEC 5.8): new periodic jobs are scheduled, removed
    /// ones are dropped after their running occurrence, a changed schedule recomputes the next
    /// date; the next attempts of every job use the new definitions. The run of one-shot jobs
    /// keeps its set of jobs.
    public func reload(_ workload: Workload) {
        mailbox.yield(.reload(workload, Timetable.Job.entries(of: workload)))
    }

    /// Tells the runner that operator requests or suspensions may have changed in the store
    /// (another process sends SIGUSR1, which the command line turns into this call).
    public func poke() {
        mailbox.yield(.poke)
    }

    /// The store as this runner writes to it: every commit under the runner's claim. Before the
    /// claim is taken (never the case once ``run()`` opens the run) the claim is one no store
    /// granted, so a commit would be refused.
    var store: ClaimedStore {
        ClaimedStore(
            queueStore, claim: heldClaim.withLock { $0 } ?? StoreClaim(owner: "no runner", fencing: 0))
    }

    /// The outputs of a periodic job's occurrence run by an earlier runner, as read before the
    /// loop began; empty when it had none or could not be read.
    func outputsReadEarlier(runID: String, jobID: String) -> [String: String] {
        earlierOutputs.withLock { $0[JobInRun(runID: runID, jobID: jobID)] } ?? [:]
    }

    /// Runs until every job of the run is final, or until a stop request has been carried out.
    /// - Throws: ``StoreError`` when state cannot be read or written; running attempts are
    ///   ended first; ``StoreError/Code/staleClaim`` when another owner claimed the store.
    public func run() async throws(StoreError) -> RunSummary {
        // Whatever ends the run, what observers were given is written out.
        defer { observer.flush() }
        let claim: StoreClaim
        if let givenClaim {
            claim = givenClaim
        } else {
            claim = try await queueStore.claim(owner: "runner \(options.runnerPID)")
        }
        heldClaim.withLock { $0 = claim }
        let random: any RandomSource = randomSeed.map { SeededRandomSource(seed: $0) } ?? SystemRandomSource()
        var known: [SchedulerInput] = []
        let usesInternet = workload.usesInternet
        if let probe, usesInternet, !(await probe.isOnline()) {
            known.append(.connectivity(online: false))
        }
        // Taken apart at once, so no second reference keeps a copy of the scheduler's tables or
        // of the opening's records alive (each is large at 100,000 jobs).
        let (scheduler, opening, resumed, unfinished) = try await open(
            now: clock.now(), random: random, inputs: known
        ).parts
        logger.info(
            "\(resumed ? "resuming" : "starting") run",
            metadata: ["run": "\(scheduler.run.id)", "jobs": "\(workload.jobs.count)"])
        observer.opened(
            OpenedRun(
                runID: scheduler.run.id, resumed: resumed,
                finalJobs: resumed ? scheduler.counts.reduce(0) { $0 + ($1.key.isFinal ? $1.value : 0) } : 0,
                totalJobs: scheduler.run.jobIDs.count, time: clock.now()))
        let schedules = try await queueStore.schedules()
        // Hooks that fell due and were not delivered (the runner died or stopped): delivered now.
        let notifications = try await queueStore.requests(runID: OperatorRequest.notifyRequests)
        // Asked for while no runner was there: started first (SPEC 5.12).
        let (requests, finished) = try await Self.readPeriodicRequests(
            queueStore, underWay: Set(unfinished.map(\.1.run.id)))
        await readEarlierOutputs(schedules)
        let conductor = Conductor(
            main: consume scheduler, timetable: Timetable(jobs: periodic, records: schedules),
            workload: workload, online: known.isEmpty,
            finishedRuns: FinishedRuns(try await queueStore.runs()),
            options: ConductorOptions(
                serve: options.serve, runnerPID: options.runnerPID, scheduler: schedulerOptions,
                maxOccurrenceRuns: options.maxOccurrenceRuns),
            // A stream of its own: the run of one-shot jobs draws its jitter from `random`.
            random: randomSeed.map { SeededRandomSource(seed: $0 ^ 0x6F63_6375_7272_656E) }
                ?? SystemRandomSource())
        let pump = Pump(runner: self, conductor: conductor)
        let background = startBackgroundTasks(usesInternet: usesInternet)
        defer { for task in background { task.cancel() } }
        pump.start(
            opening: opening, unfinished: unfinished, requests: requests, finished: finished,
            notifications: notifications)
        /// Hands one message to the pump; false once the pump is done.
        func deliver(_ message: Message) -> Bool {
            let stop = stopRequest.load(ordering: .relaxed)
            if stop != 0 && pump.stopSignal == nil { pump.receive(.stop(stop)) }
            pump.receive(message)
            return !pump.isDone
        }
        waiting: while !pump.isDone, let batch = await mailbox.next() {
            for message in batch {
                // A commit's end goes first: the store takes what waits while the rest is handled.
                for first in mailbox.takeFirst() where !deliver(first) { break waiting }
                guard deliver(message) else { break waiting }
            }
            // What the batch reported goes out in one go, before the loop waits for more.
            observer.flush()
        }
        await pump.finishSideTasks()

        if let failure = pump.storeFailure { throw failure }
        let closing = pump.closeAll()
        try await store.commit(closing.changes + closing.reports(masking: options.secrets))
        for event in closing.events { observer.record(event) }
        let main = pump.main
        return RunSummary(
            runID: main.run.id, state: main.run.state, resumed: resumed,
            stopSignal: pump.stopSignal, counts: main.shownCounts,
            failedOccurrences: pump.conductor.failedOccurrences,
            stoppedOccurrences: pump.conductor.stoppedOccurrences,
            troubled: main.troubledJobs)
    }

    /// Reads the outputs of each periodic job's latest occurrence that succeeded under an
    /// earlier runner, in one read: the loop cannot wait for a read when an occurrence that
    /// needs them starts. Those of occurrences this runner runs are kept as they end.
    private func readEarlierOutputs(_ schedules: [String: ScheduleRecord]) async {
        // Only the periodic jobs another job needs: 10,000 periodic jobs of their own read nothing.
        var needed = Set<String>()
        for index in workload.jobs.indices where !workload.jobs[index].needs.isEmpty {
            needed.formUnion(workload.jobs[index].needs)
        }
        let jobs = schedules.values.compactMap { record in
            record.lastResult == .succeeded && needed.contains(record.jobID)
                ? record.lastRunID.map { JobInRun(runID: $0, jobID: record.jobID) } : nil
        }
        guard !jobs.isEmpty else { return }
        // An unreadable store gives nothing rather than stopping, as an unreadable run did.
        let outputs = (try? await queueStore.outputs(of: jobs)) ?? [:]
        earlierOutputs.withLock { $0 = outputs }
    }

    /// The requests about periodic jobs (``OperatorRequest/periodicRequests``), and the stored
    /// snapshots of the finished occurrence runs they name (those not in `underWay`).
    static func readPeriodicRequests(_ store: any QueueStore, underWay: Set<String>) async throws(StoreError)
        -> ([OperatorRequest], [String: RunSnapshot])
    {
        let requests = try await store.requests(runID: OperatorRequest.periodicRequests)
        var finished: [String: RunSnapshot] = [:]
        for request in requests {
            guard let runID = request.runID, !underWay.contains(runID), finished[runID] == nil,
                let snapshot = try await store.snapshot(runID: runID)
            else { continue }
            finished[runID] = snapshot
        }
        return (requests, finished)
    }

    /// The connectivity monitor and the fallback store check: unstructured, because each only
    /// posts messages until the run ends, when they are cancelled.
    private func startBackgroundTasks(usesInternet: Bool) -> [Task<Void, Never>] {
        var tasks: [Task<Void, Never>] = []
        let clock = self.clock
        let mailbox = self.mailbox
        if let interval = options.storeCheckInterval {
            let lock = self.lock
            tasks.append(
                Task {
                    while !Task.isCancelled {
                        try? await clock.sleep(until: clock.now().addingTimeInterval(interval.seconds))
                        do throws(StoreError) {
                            try lock?.verify()
                        } catch {
                            mailbox.yield(.lost(error))
                            return
                        }
                        mailbox.yield(.poke)
                    }
                })
        }
        if let probe, usesInternet {
            let interval = workload.connectivity.interval
            tasks.append(
                Task {
                    while !Task.isCancelled {
                        do {
                            try await clock.sleep(until: clock.now().addingTimeInterval(interval.seconds))
                        } catch {
                            return
                        }
                        mailbox.yield(.broadcast(.connectivity(online: await probe.isOnline())))
                    }
                })
        }
        return tasks
    }

    /// The scheduler's settings for the runs of this runner.
    var schedulerOptions: SchedulerOptions {
        SchedulerOptions(
            maxRunning: options.maxRunning, logDirectory: options.logDirectory,
            storedLogDirectory: options.storedLogDirectory)
    }
}
