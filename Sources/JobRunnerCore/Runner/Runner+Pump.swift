import Foundation
import Logging

extension Runner {
    /// The shell around the ``Conductor`` while a run goes on: it hands each message to the
    /// conductor, which decides; stores each decision, and performs its effects only once they
    /// are durable; and owns what performing them needs: the commit under way and its pacing,
    /// the attempts and side tasks under way, the timer. Used only by the task running
    /// ``Runner/run()``.
    final class Pump {
        private let runner: Runner
        /// Decides; this class performs.
        private(set) var conductor: Conductor
        /// Decisions submitted to the store and not yet durable.
        private var inFlight = 0
        /// Decisions not yet submitted: they wait for the commit under way, and maybe for the
        /// attempts the last commit started (``CommitPacing``).
        private var held = Decision()
        private var pacing: CommitPacing
        /// When the commit under way was submitted.
        private var commitSubmitted: ContinuousClock.Instant?
        /// Attempts started by the last commit that have not ended: the next commit may wait
        /// for them.
        private var fresh = Set<AttemptKey>()
        /// Until when the next commit waits for them, and the number of the alarm that says
        /// when that passed.
        private var freshWait: (until: ContinuousClock.Instant, alarm: Int)?
        /// Rings when a wait for fresh attempts is over; its thread starts with the first wait.
        private let alarm: PacingAlarm
        private(set) var stopSignal: Int32?
        private(set) var storeFailure: StoreError?
        /// Attempts under way: each started by its handler without a task (``AttemptStop``), or
        /// run as a task of its own, not a child of a task group: the runtime keeps a group's
        /// children in a list it walks to add and remove one, so 20,000 attempts at once (an
        /// unlimited pipeline) made each start and end cost O(n). Each is ended on a stop, and
        /// the loop ends only after every one has reported its end.
        private var attemptTasks:
            [AttemptKey: (attempt: Int, running: RunningAttempt, started: ContinuousClock.Instant)] = [:]
        /// Constraint checks and satisfies under way, awaited before the run returns.
        private var sideTasks: [Int: Task<Void, Never>] = [:]
        private var nextSideTask = 0
        private var timer: (date: Date, task: Task<Void, Never>)?

        /// An attempt under way, and how a stop ends it.
        private enum RunningAttempt {
            case task(Task<Void, Never>)
            case started(AttemptStop)

            /// Ends it as `interrupted`; its end still comes back as a message.
            func end() {
                switch self {
                case .task(let task): task.cancel()
                case .started(let stop): stop()
                }
            }
        }

        private struct AttemptKey: Hashable {
            let runID: String
            let jobID: String
        }

        init(runner: Runner, conductor: consuming Conductor) {
            self.runner = runner
            self.conductor = conductor
            self.pacing = CommitPacing(runner.options.commitPacing)
            let mailbox = runner.mailbox
            self.alarm = PacingAlarm { mailbox.yield(.paced($0)) }
        }

        deinit { alarm.stop() }

        /// The run of one-shot jobs.
        var main: Scheduler { conductor.main }

        /// Whether the loop is over: nothing runs or waits to be stored, and the conductor is
        /// settled.
        var isDone: Bool {
            // Once a commit failed, nothing more is stored and the effects of the failed
            // decision never happen (an attempt decided there never starts, so the scheduler
            // would wait for its end forever): done once every attempt that did start has ended.
            if storeFailure != nil { return inFlight == 0 && attemptTasks.isEmpty }
            return inFlight == 0 && held.isEmpty && inPlace { $0.isSettled }
        }

        /// Resumes occurrences a dead or stopped runner left unfinished, then takes what the
        /// timetable says is due now.
        func start(
            opening decision: consuming Decision, unfinished: [(Occurrence, RunSnapshot)],
            requests: [OperatorRequest], finished: [String: RunSnapshot], notifications: [OperatorRequest]
        ) {
            submit(decision)
            submit(
                conductor.open(
                    resuming: unfinished, requests: requests, finished: finished,
                    notifications: notifications,
                    now: runner.clock.now()))
            rearmTimer()
            flushIfDue()
        }

        func receive(_ message: Message) {
            switch message {
            case .input(let runID, let input):
                if case .attemptEnded(let jobID, let attempt, _) = input {
                    let key = AttemptKey(runID: runID, jobID: jobID)
                    if let running = attemptTasks[key], running.attempt == attempt {
                        attemptTasks[key] = nil
                        pacing.attemptEnded(after: running.started.duration(to: .now))
                        fresh.remove(key)
                    }
                }
                decide(.run(runID, input))
            case .sideTaskEnded(let id, let runID, let input):
                sideTasks[id] = nil
                switch (input, runID) {
                case (.satisfyEnded(let name, let outcome), _):
                    copySatisfyLog(name)
                    decide(.satisfyEnded(constraint: name, outcome))
                case (.probed(let value), let runID?):
                    decide(.probed(runID: runID, online: value))
                case (_, let runID?):
                    decide(.run(runID, input))
                case (.connectivity(let value), nil):
                    decide(.connectivity(online: value))
                case (_, nil):
                    decide(.everyRun(input))
                }
            case .broadcast(let input):
                if case .connectivity(let value) = input {
                    decide(.connectivity(online: value))
                } else {
                    decide(.everyRun(input))
                }
            case .durable(.success, let effects):
                committed()
                perform(effects)
            case .durable(.failure(let error), _):
                committed()
                fail(error)
            case .lost(let error):
                fail(error)
            case .wake:
                timer = nil
                decide(.tick)
            case .poke:
                if stopSignal == nil { readStore() }
            case .stop(let signal):
                stop(signal)
            case .reload(let reloaded, let periodic):
                decide(.reload(reloaded, periodic))
            case .notified(let id, let request, let failure, let interrupted):
                sideTasks[id] = nil
                decide(.notified(request, failure: failure, interrupted: interrupted || stopSignal != nil))
            case .periodicRequests(let requests, let finished):
                if stopSignal == nil { decide(.periodicRequests(requests, finished: finished)) }
            case .paced(let number):
                // Over, whatever the clocks say: no other message may come to end it.
                if freshWait?.alarm == number { freshWait?.until = .now }
            }
            rearmTimer()
            flushIfDue()
        }

        /// The store failed, or the runner's hold on it: nothing more is stored; the attempts
        /// under way are ended and the run fails with the first such error.
        private func fail(_ error: StoreError) {
            if storeFailure == nil {
                storeFailure = error
                // A notice: the run's caller reports the failure to the user in its own words.
                runner.logger.notice("cannot store state; stopping", metadata: ["error": "\(error)"])
            }
            stop(SIGTERM)
        }

        /// What `body` reads of the conductor, read where it is: a method or computed property of
        /// a class's stored struct is called on a copy of it (every member retained, then
        /// released), and the loop asks three such questions per message (a tenth of its time at
        /// 100,000 chained jobs); through `inout` it is called on the stored value.
        private func inPlace<T>(_ body: (inout Conductor) -> T) -> T { body(&conductor) }

        /// Hands an input to the conductor and submits what it decided.
        private func decide(_ input: ConductorInput) {
            submit(conductor.handle(input, now: runner.clock.now()))
        }

        // MARK: Store and effects

        /// Stores a decision's changes; its effects follow once they are durable. It is held
        /// until ``flushIfDue()`` hands it to the store (at the end of each message).
        func submit(_ decision: consuming Decision) {
            // Taken as it is when nothing is held: appending a run's opening (100,000 records)
            // to an empty decision would copy it.
            if held.isEmpty { held = decision } else { held.append(decision) }
        }

        /// Hands what is held to the store unless the pacing says to wait: for the commit under
        /// way, or for fresh attempts that usually end sooner than a commit takes.
        private func flushIfDue() {
            guard !held.isEmpty, inFlight == 0 else { return }
            if stopSignal == nil, storeFailure == nil, !fresh.isEmpty, let wait = pacing.waitForFreshAttempts
            {
                let now = ContinuousClock.now
                if let freshWait {
                    if now < freshWait.until { return }
                } else {
                    freshWait = (now.advanced(by: wait), alarm.arm(after: wait))
                    return
                }
            }
            if freshWait != nil { alarm.disarm() }
            freshWait = nil
            fresh.removeAll()
            let decision = held
            held = Decision()
            store(decision)
        }

        private func committed() {
            inFlight -= 1
            if let commitSubmitted { pacing.committed(in: commitSubmitted.duration(to: .now)) }
            commitSubmitted = nil
        }

        private func store(_ decision: Decision) {
            for answer in decision.answers {
                runner.logger.info(
                    "\(answer.request.kind.rawValue) \(answer.request.jobID): \(answer.result)")
            }
            guard storeFailure == nil, !decision.changes.isEmpty || !decision.effects.isEmpty else { return }
            inFlight += 1
            commitSubmitted = .now
            let mailbox = runner.mailbox
            let effects = decision.effects
            runner.store.submit(decision.changes + decision.reports(masking: runner.options.secrets)) {
                result in mailbox.yieldFirst(.durable(result, effects))
            }
        }

        private func stop(_ signal: Int32) {
            guard stopSignal == nil else { return }
            stopSignal = signal
            runner.logger.notice(
                "stopping: no new attempts; ending the running ones", metadata: ["signal": "\(signal)"])
            for (_, attempt) in attemptTasks { attempt.running.end() }
            for (_, task) in sideTasks { task.cancel() }
            timer?.task.cancel()
            timer = nil
            alarm.disarm()
            freshWait = nil
            decide(.stop)
        }

        /// Performs durable effects; inputs known at once go back to the conductor.
        private func perform(_ effects: [Effect]) {
            for effect in effects {
                switch effect {
                case .emit(let event):
                    runner.observer.record(event)
                case .emitNewJobs(let jobs):
                    for event in jobs.events { runner.observer.record(event) }
                case .startAttempt(let order):
                    guard stopSignal == nil, let job = inPlace({ $0.definition(order.jobID) }) else {
                        decide(.notStarted(order))
                        continue
                    }
                    startAttempt(order, job: job)
                case .checkConstraints(let runID, let jobID, let names):
                    let constraints = names.compactMap { conductor.workload.constraints[$0] }
                    let constraintRunner = runner.constraintRunner
                    sideTask(runID: runID) {
                        var failed: String?
                        for constraint in constraints where !Task.isCancelled {
                            if let constraintRunner, !(await constraintRunner.check(constraint)) {
                                failed = constraint.name
                                break
                            }
                        }
                        return .constraintsChecked(jobID: jobID, failed: failed)
                    }
                case .satisfy(let runID, let name):
                    guard conductor.joinSatisfy(runID: runID, constraint: name) else { continue }
                    let constraint = conductor.workload.constraints[name]
                    let logDirectory = runner.options.logDirectory
                    let constraintRunner = runner.constraintRunner
                    sideTask(runID: runID) {
                        var outcome = SatisfyOutcome.satisfied
                        if let constraintRunner, let constraint {
                            outcome = await constraintRunner.satisfy(
                                constraint,
                                logPath: LogLayout.satisfyLog(
                                    in: logDirectory, runID: runID, constraint: name),
                                processPath: LogLayout.satisfyProcess(
                                    in: logDirectory, runID: runID, constraint: name))
                        }
                        return .satisfyEnded(constraint: name, outcome)
                    }
                case .probeConnectivity(let runID):
                    probeNow(for: runID)
                case .notify(let request):
                    deliver(request)
                case .reportMissed(let jobID, let count, let catchUp):
                    runner.observer.missed(
                        jobID: jobID, count: count, catchUp: catchUp, time: runner.clock.now())
                case .removeLogs(let runIDs):
                    for runID in runIDs {
                        try? FileManager.default.removeItem(atPath: "\(runner.options.logDirectory)/\(runID)")
                    }
                case .endAttempt(let runID, let jobID, let attempt, let pid, let startTime):
                    if let running = attemptTasks[AttemptKey(runID: runID, jobID: jobID)],
                        running.attempt == attempt
                    {
                        // The handler ends the process group and reports `interrupted`.
                        running.running.end()
                    } else if let orphans = runner.orphans {
                        // Unstructured: ending a process group takes up to the grace period.
                        let orphan = Orphan(
                            runID: runID, jobID: jobID, attempt: attempt, pid: pid, startTime: startTime)
                        Task { await orphans.terminate(orphan) }
                    }
                }
            }
        }

        private func startAttempt(_ order: AttemptOrder, job: JobDefinition) {
            let mailbox = runner.mailbox
            let orphans = runner.orphans
            let request = AttemptRequest(
                runID: order.runID, job: job, attempt: order.attempt, logPath: order.logPath,
                workDirectory: "\(runner.options.logDirectory)/\(order.runID)",
                // An occurrence's plan holds its job alone: the pump knows what its needs gave.
                neededOutputs: order.runID == conductor.main.run.id
                    ? order.neededOutputs : outputsOfNeeds(of: job),
                onSpawn: { pid in
                    mailbox.yield(
                        .input(
                            run: order.runID,
                            .attemptSpawned(
                                jobID: order.jobID, attempt: order.attempt, pid: pid,
                                pidStartTime: orphans?.startTime(of: pid))))
                })
            let handler = runner.handler
            let ended: @Sendable (AttemptResult) -> Void = { result in
                mailbox.yield(
                    .input(
                        run: order.runID, .attemptEnded(jobID: order.jobID, attempt: order.attempt, result)))
            }
            let running: RunningAttempt
            if let stop = handler.start(request, ended: ended) {
                running = .started(stop)
            } else {
                // Detached: the attempt needs none of the loop's task-local values (the service
                // group's), and a task that inherits them gets a copy of each in memory of its
                // own, about 1 KB: 10 MB while 10,000 occurrences falling due together wait for
                // their turn to spawn. It is cancelled through its handle, as a child would be.
                running = .task(Task.detached { ended(await handler.run(request)) })
            }
            let key = AttemptKey(runID: order.runID, jobID: order.jobID)
            attemptTasks[key] = (order.attempt, running, .now)
            fresh.insert(key)
        }

        /// Delivers a due `notify:` hook as a side task (awaited, and ended on a stop); its end
        /// comes back as a message.
        private func deliver(_ request: OperatorRequest) {
            let id = nextSideTask
            nextSideTask += 1
            let mailbox = runner.mailbox
            guard stopSignal == nil, let notifier = runner.notifier, let runID = request.runID else {
                // Left stored: a runner that can deliver it does.
                mailbox.yield(.notified(id, request, failure: nil, interrupted: true))
                return
            }
            guard let hook = inPlace({ $0.hook(request.jobID) }) else {
                mailbox.yield(
                    .notified(
                        id, request, failure: "the job files no longer have notify hook '\(request.jobID)'",
                        interrupted: false))
                return
            }
            sideTasks[id] = Task {
                let failure = await notifier.deliver(hook, runID: runID)
                mailbox.yield(.notified(id, request, failure: failure, interrupted: Task.isCancelled))
            }
        }

        /// Runs a constraint command as a task whose result comes back as an input of its run.
        private func sideTask(runID: String, _ body: @escaping @Sendable () async -> SchedulerInput) {
            let id = nextSideTask
            nextSideTask += 1
            let mailbox = runner.mailbox
            let task = Task {
                mailbox.yield(.sideTaskEnded(id, run: runID, await body()))
            }
            // Decided before a stop, performed after it: ended at once, as the stop ended the
            // others, rather than awaited to its end on the way out.
            if stopSignal != nil { task.cancel() }
            sideTasks[id] = task
        }

        /// A constraint's `satisfy` ended: the runs waiting for it that did not start it get a
        /// copy of its output where their failed attempts point.
        private func copySatisfyLog(_ name: String) {
            let runs = conductor.satisfyWaiters(name)
            guard let first = runs.first, runs.count > 1 else { return }
            let directory = runner.options.logDirectory
            let log = LogLayout.satisfyLog(in: directory, runID: first, constraint: name)
            for runID in runs.dropFirst() {
                let copy = LogLayout.satisfyLog(in: directory, runID: runID, constraint: name)
                try? FileManager.default.createDirectory(
                    atPath: (copy as NSString).deletingLastPathComponent,
                    withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700])
                try? FileManager.default.removeItem(atPath: copy)
                try? FileManager.default.copyItem(atPath: log, toPath: copy)
            }
        }

        /// What an occurrence's attempt receives of its job's needs; a periodic need an earlier
        /// runner ran was read from its stored run before the loop began (store reads are async).
        private func outputsOfNeeds(of job: JobDefinition) -> [String: [String: String]] {
            let runner = self.runner
            return conductor.outputsOfNeeds(of: job) { runID, jobID in
                runner.outputsReadEarlier(runID: runID, jobID: jobID)
            }
        }

        /// Suspensions and operator requests as the store holds them now, read by a task (store
        /// reads are async) that hands them back as messages, as the store check always did.
        private func readStore() {
            let store = runner.store.base
            let mailbox = runner.mailbox
            let logger = runner.logger
            let runIDs = conductor.runIDs
            // Unstructured: it only reads and posts messages; one that ends after the loop posts
            // to nobody. A request read twice (two pokes) is applied once (its id is kept).
            Task {
                do {
                    let suspended = try await store.pipelines().mapValues(\.suspended)
                    mailbox.yield(.broadcast(.suspensions(suspended)))
                    let (requests, finished) = try await Runner.readPeriodicRequests(
                        store, underWay: Set(runIDs))
                    if !requests.isEmpty { mailbox.yield(.periodicRequests(requests, finished: finished)) }
                    for runID in runIDs {
                        let requests = try await store.requests(runID: runID)
                        if !requests.isEmpty {
                            mailbox.yield(.input(run: runID, .operatorRequests(requests, stored: true)))
                        }
                    }
                } catch {
                    logger.warning("cannot read operator requests", metadata: ["error": "\(error)"])
                }
            }
        }

        /// Asks the connectivity probe at once for run `runID`; its answer goes to every run.
        /// Without a probe the machine counts as online.
        private func probeNow(for runID: String) {
            let mailbox = runner.mailbox
            let id = nextSideTask
            nextSideTask += 1
            guard let probe = runner.probe else {
                mailbox.yield(.sideTaskEnded(id, run: runID, .probed(online: conductor.online)))
                return
            }
            sideTasks[id] = Task {
                mailbox.yield(.sideTaskEnded(id, run: runID, .probed(online: await probe.isOnline())))
            }
        }

        private func rearmTimer() {
            let wake = stopSignal == nil ? inPlace { $0.nextWakeDate } : nil
            guard wake != timer?.date else { return }
            timer?.task.cancel()
            timer = nil
            guard let wake else { return }
            let clock = runner.clock
            let mailbox = runner.mailbox
            // Unstructured so it can be cancelled and replaced when an earlier date comes
            // along; it only posts a message, never touches state.
            let task = Task {
                do {
                    try await clock.sleep(until: wake)
                    mailbox.yield(.wake)
                } catch {}
            }
            timer = (wake, task)
        }

        /// Waits for cancelled constraint commands to end.
        func finishSideTasks() async {
            timer?.task.cancel()
            alarm.stop()
            for (_, task) in sideTasks {
                task.cancel()
                await task.value
            }
        }

        /// Closes what a stop left open (``Conductor/closeAll(now:)``).
        func closeAll() -> Decision { conductor.closeAll(now: runner.clock.now()) }
    }
}
