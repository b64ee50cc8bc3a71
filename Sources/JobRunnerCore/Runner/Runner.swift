import Foundation
import Logging

/// Options of one `run`.
public struct RunnerOptions: Sendable {
    /// Global cap on running attempts (`--jobs N`); nil is unlimited beyond pipeline limits.
    public var maxRunning: Int?
    /// Start a fresh run even when an interrupted one of the same jobs could be resumed.
    public var startNewRun: Bool
    /// Where attempt logs go: `<logDirectory>/<run>/<job>/<attempt>.log`.
    public var logDirectory: String
    /// Recorded in the run, so `status` can say which process works on it.
    public var runnerPID: Int32
    /// How often the runner looks at the store for operator requests and suspensions when
    /// nobody pokes it (`poke()` is the fast path); nil: only when poked.
    public var storeCheckInterval: Duration?

    public init(
        maxRunning: Int? = nil, startNewRun: Bool = false, logDirectory: String, runnerPID: Int32,
        storeCheckInterval: Duration? = nil
    ) {
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
    /// How many jobs ended in each state.
    public var counts: [JobState: Int]
}

/// Runs a workload to the end: decides with a ``Scheduler``, stores every decision with the
/// ``QueueStore`` before acting on it, and runs attempts with a ``JobHandler``.
///
/// One task owns all decisions; attempts, store completions, timers and stop requests reach it
/// as events on one stream, so no decision races another and no lock is held across an await.
public final class Runner: Sendable {
    enum LoopEvent: Sendable {
        case durable(Result<Void, StoreError>, [Effect])
        case finished(jobID: String, attempt: Int, AttemptResult)
        case spawned(jobID: String, attempt: Int, pid: Int32)
        case wake
        case poke
        case connectivity(Bool)
        case checked(jobID: String, failed: String?)
        case satisfied(constraint: String, SatisfyOutcome)
        case stop(Int32)
    }

    let workload: Workload
    let store: any QueueStore
    private let handler: any JobHandler
    private let clock: any RunnerClock
    private let observer: any RunObserver
    let orphans: (any OrphanTerminator)?
    private let probe: (any ConnectivityProbe)?
    private let constraintRunner: (any ConstraintRunner)?
    let options: RunnerOptions
    private let logger: Logger
    private let randomSeed: UInt64?
    private let events: AsyncStream<LoopEvent>
    private let continuation: AsyncStream<LoopEvent>.Continuation

    /// - Parameters:
    ///   - randomSeed: a seed for backoff jitter; nil uses the system's generator.
    ///   - orphans: ends processes a dead runner left behind; nil when handlers spawn none.
    ///   - connectivity: says whether the machine is online, every `workload.connectivity.interval`;
    ///     nil: always online. Not asked at all when no job needs the internet.
    ///   - constraints: runs constraints' `check` and `satisfy`; nil: every constraint holds.
    public init(
        workload: Workload, store: any QueueStore, handler: any JobHandler,
        clock: any RunnerClock = SystemClock(),
        observer: any RunObserver, orphans: (any OrphanTerminator)? = nil,
        connectivity: (any ConnectivityProbe)? = nil, constraints: (any ConstraintRunner)? = nil,
        options: RunnerOptions, logger: Logger, randomSeed: UInt64? = nil
    ) {
        self.probe = connectivity
        self.constraintRunner = constraints
        self.workload = workload
        self.store = store
        self.handler = handler
        self.clock = clock
        self.observer = observer
        self.orphans = orphans
        self.options = options
        self.logger = logger
        self.randomSeed = randomSeed
        (events, continuation) = AsyncStream.makeStream(of: LoopEvent.self)
    }

    /// Asks the runner to stop cleanly: no new attempts, running ones are ended and recorded
    /// `interrupted`. Safe to call from any thread, any number of times.
    public func requestStop(signal: Int32) {
        continuation.yield(.stop(signal))
    }

    /// Tells the runner that operator requests or suspensions may have changed in the store
    /// (another process sends SIGUSR1, which the command line turns into this call).
    public func poke() {
        continuation.yield(.poke)
    }

    /// Runs until every job of the run is final, or until a stop request has been carried out.
    /// - Throws: ``StoreError`` when state cannot be read or written; running attempts are
    ///   ended first.
    public func run() async throws(StoreError) -> RunSummary {
        if let seed = randomSeed {
            var random = SeededRandomSource(seed: seed)
            return try await run(random: &random)
        }
        var random = SystemRandomSource()
        return try await run(random: &random)
    }

    private func run(random: inout some RandomSource) async throws(StoreError) -> RunSummary {
        var (scheduler, resumed, runRecord) = try await prepare(now: clock.now(), random: &random)
        logger.info(
            "\(resumed ? "resuming" : "starting") run",
            metadata: ["run": "\(runRecord.id)", "jobs": "\(workload.jobs.count)"])
        let continuation = self.continuation
        var stopSignal: Int32?
        var storeFailure: StoreError?
        var inFlight = 0
        var attempts: [String: AttemptRecord] = [:]
        var unstoredPIDs = Set<String>()
        var appliedRequests = Set<UInt64>()
        let checker = options.storeCheckInterval.map { interval in
            // Unstructured: a slow fallback for a missed poke, cancelled when the run ends.
            Task { [clock] in
                while !Task.isCancelled {
                    try? await clock.sleep(until: clock.now().addingTimeInterval(interval.seconds))
                    continuation.yield(.poke)
                }
            }
        }
        defer { checker?.cancel() }
        let probe = workload.usesInternet ? self.probe : nil
        if let probe, !(await probe.isOnline()) {
            scheduler.setOnline(false, now: clock.now())
        }
        let interval = workload.connectivity.interval
        let monitor = probe.map { probe in
            // Unstructured: asks the probe every interval until the run ends; only posts events.
            Task { [clock] in
                while !Task.isCancelled {
                    do {
                        try await clock.sleep(until: clock.now().addingTimeInterval(interval.seconds))
                    } catch {
                        return
                    }
                    continuation.yield(.connectivity(await probe.isOnline()))
                }
            }
        }
        defer { monitor?.cancel() }
        var timer: (date: Date, task: Task<Void, Never>)?
        // Attempts run as tasks of their own, not children of the group below: the runtime keeps
        // a group's children in a list it walks to add and remove one, so 20,000 attempts at
        // once (an unlimited pipeline) made each start and end cost O(n). Each is cancelled on a
        // stop, and the loop ends only after every one has reported its end.
        var attemptTasks: [String: (attempt: Int, task: Task<Void, Never>)] = [:]

        await withTaskGroup(of: Void.self) { group in
            func cancelAll() {
                group.cancelAll()
                for (_, running) in attemptTasks { running.task.cancel() }
            }

            func flush() {
                var batch = scheduler.takeBatch()
                guard !batch.changes.isEmpty || !batch.effects.isEmpty else { return }
                // Still-running attempts only: a finished one's record already carries its pid.
                let pids = unstoredPIDs.compactMap { attempts[$0] }.map {
                    StoreChange.putAttempt(runID: runRecord.id, $0)
                }
                batch.changes.insert(contentsOf: pids, at: 0)
                unstoredPIDs.removeAll()
                for change in batch.changes {
                    if case .putAttempt(_, let attempt) = change, attempt.outcome == nil {
                        attempts[attempt.jobID] = attempt
                    }
                }
                inFlight += 1
                let effects = batch.effects
                store.submit(batch.changes) { result in continuation.yield(.durable(result, effects)) }
            }

            func perform(_ effects: [Effect]) {
                for effect in effects {
                    switch effect {
                    case .emit(let event):
                        observer.record(event)
                    case .start(let jobID, let attempt):
                        guard stopSignal == nil, scheduler.stopRequests[jobID] == nil,
                            let job = workload.job(jobID)
                        else {
                            scheduler.cancelStart(jobID: jobID, attempt: attempt, now: clock.now())
                            continue
                        }
                        let request = makeRequest(
                            job: job, attempt: attempt, runID: runRecord.id, scheduler: scheduler)
                        let handler = self.handler
                        let task = Task {
                            let result = await handler.run(request)
                            continuation.yield(.finished(jobID: jobID, attempt: attempt, result))
                        }
                        attemptTasks[jobID] = (attempt, task)
                    case .check(let jobID):
                        let constraints = (workload.job(jobID)?.constraints ?? []).compactMap {
                            workload.constraints[$0]
                        }
                        let runner = constraintRunner
                        group.addTask {
                            var failed: String?
                            for constraint in constraints where !Task.isCancelled {
                                if let runner, !(await runner.check(constraint)) {
                                    failed = constraint.name
                                    break
                                }
                            }
                            continuation.yield(.checked(jobID: jobID, failed: failed))
                        }
                    case .satisfy(let name):
                        let constraint = workload.constraints[name]
                        let runner = constraintRunner
                        group.addTask {
                            var outcome = SatisfyOutcome.satisfied
                            if let runner, let constraint { outcome = await runner.satisfy(constraint) }
                            continuation.yield(.satisfied(constraint: name, outcome))
                        }
                    }
                }
            }

            func checkStore(now: Date) {
                do {
                    scheduler.updateSuspensions(try store.pipelines().mapValues(\.suspended), now: now)
                    for request in try store.requests(runID: runRecord.id)
                    where appliedRequests.insert(request.id).inserted {
                        let result = scheduler.apply(request, now: now)
                        scheduler.append(.deleteRequest(runID: runRecord.id, id: request.id))
                        logger.info("\(request.kind.rawValue) \(request.jobID): \(result)")
                        if case .terminating(let jobID) = result, let orphans {
                            let record = attempts[jobID]
                            let orphan = Orphan(
                                runID: runRecord.id, jobID: jobID, attempt: record?.number ?? 0,
                                pid: record?.pid,
                                startTime: record?.pidStartTime)
                            // Unstructured: ending a process group takes up to the grace period,
                            // and the loop must go on meanwhile; the attempt's end arrives as usual.
                            Task { await orphans.terminate(orphan) }
                        }
                    }
                } catch {
                    logger.warning("cannot read operator requests", metadata: ["error": "\(error)"])
                }
            }

            checkStore(now: clock.now())
            scheduler.startReadyJobs(now: clock.now())
            flush()
            for await event in events {
                let now = clock.now()
                switch event {
                case .durable(.success, let effects):
                    inFlight -= 1
                    perform(effects)
                case .durable(.failure(let error), _):
                    inFlight -= 1
                    if storeFailure == nil {
                        storeFailure = error
                        logger.error("cannot store state; stopping", metadata: ["error": "\(error)"])
                    }
                    if stopSignal == nil { stopSignal = SIGTERM }
                    cancelAll()
                case .finished(let jobID, let attempt, let result):
                    if attemptTasks[jobID]?.attempt == attempt { attemptTasks[jobID] = nil }
                    scheduler.finish(
                        jobID: jobID, attempt: attempt, result: result,
                        attemptRecord: attempts.removeValue(forKey: jobID),
                        now: now, stopping: stopSignal != nil, random: &random)
                case .spawned(let jobID, let attempt, let pid):
                    if var record = attempts[jobID], record.number == attempt {
                        record.pid = pid
                        record.pidStartTime = orphans?.startTime(of: pid)
                        attempts[jobID] = record
                        // The pid rides along with the next commit instead of costing one of its
                        // own: after a crash the attempt is also found by its environment.
                        unstoredPIDs.insert(jobID)
                    }
                case .wake:
                    timer = nil
                case .poke:
                    if stopSignal == nil { checkStore(now: now) }
                case .connectivity(let online):
                    scheduler.setOnline(online, now: now)
                case .checked(let jobID, let failed):
                    scheduler.constraintsChecked(jobID: jobID, failed: failed, now: now)
                case .satisfied(let name, let outcome):
                    scheduler.constraintSatisfied(name, outcome: outcome, now: now, random: &random)
                case .stop(let signal):
                    if stopSignal == nil {
                        stopSignal = signal
                        logger.notice(
                            "stopping: no new attempts; ending the running ones",
                            metadata: ["signal": "\(signal)"])
                        cancelAll()
                    }
                }
                if stopSignal == nil {
                    scheduler.releaseDelayed(now: now)
                    scheduler.startReadyJobs(now: now)
                }
                if storeFailure == nil { flush() } else { _ = scheduler.takeBatch() }

                let wake = stopSignal == nil ? scheduler.nextWakeDate : nil
                if wake != timer?.date {
                    timer?.task.cancel()
                    timer = nil
                    if let wake {
                        let clock = self.clock
                        // Unstructured so it can be cancelled and replaced when an earlier
                        // date comes along; it only posts an event, never touches state.
                        let task = Task {
                            do {
                                try await clock.sleep(until: wake)
                                continuation.yield(.wake)
                            } catch {}
                        }
                        timer = (wake, task)
                    }
                }
                let idle = scheduler.runningTotal == 0 && inFlight == 0
                if idle && (scheduler.isFinished || stopSignal != nil) { break }
            }
            timer?.task.cancel()
        }

        if let storeFailure { throw storeFailure }
        let now = clock.now()
        var counts: [JobState: Int] = [:]
        for record in scheduler.jobs.values { counts[record.state, default: 0] += 1 }
        if scheduler.isFinished {
            let failed =
                counts[.failed, default: 0] + counts[.blocked, default: 0] + counts[.cancelled, default: 0]
            runRecord.state = failed > 0 ? .failed : .succeeded
            runRecord.finishedAt = now
        } else {
            runRecord.state = .stopped
        }
        try await store.commit([.putRun(runRecord)])
        observer.record(
            RunEvent(time: now, run: runRecord.id, kind: .runFinished, state: runRecord.state.rawValue))
        return RunSummary(
            runID: runRecord.id, state: runRecord.state, resumed: resumed,
            stopSignal: stopSignal, counts: counts)
    }

    private func makeRequest(job: JobDefinition, attempt: Int, runID: String, scheduler: Scheduler)
        -> AttemptRequest
    {
        var needed: [String: [String: String]] = [:]
        for need in job.needs {
            if let values = scheduler.outputs[need] { needed[need] = values }
        }
        let continuation = self.continuation
        let jobID = job.id
        return AttemptRequest(
            runID: runID, job: job, attempt: attempt,
            logPath: scheduler.logPath(job: job.id, attempt: attempt),
            workDirectory: "\(options.logDirectory)/\(runID)", neededOutputs: needed,
            onSpawn: { pid in continuation.yield(.spawned(jobID: jobID, attempt: attempt, pid: pid)) })
    }
}
