import Foundation
import Logging

extension Runner {
    /// The loop's state while a run goes on: the scheduler of the run of one-shot jobs, one
    /// scheduler per running occurrence of a periodic job (each a run of its own), the
    /// timetable that says when occurrences start, what is being committed, the tasks that
    /// perform effects. Used only by the task running ``Runner/run()``.
    final class Pump {
        private let runner: Runner
        private(set) var main: Scheduler
        private var mainClosed = false
        /// Occurrence runs under way, by run id.
        private var occurrenceRuns: [String: (occurrence: Occurrence, scheduler: Scheduler)] = [:]
        /// Occurrence runs that took an input since the last look: only they can have finished.
        /// (Looking at every run after every message cost O(n) with 10,000 occurrences at once.)
        private var touched = Set<String>()
        /// The pipeline slots of the run of one-shot jobs and the occurrences, shared.
        private var slots = SlotBoard()
        /// The occurrence runs waiting for a backoff delay, with its date.
        private var wakes: [String: Date] = [:]
        private var timetable: Timetable
        /// The definitions as last loaded (`serve` reloads them).
        private var workload: Workload
        /// Occurrences due whose non-periodic needs are not final yet.
        private var waiting: [Occurrence] = []
        /// The outputs of each periodic job's latest occurrence, once it succeeded: what the
        /// periodic jobs that need it receive (SPEC 5.8). Filled as occurrences end, or read
        /// from the store for one an earlier runner ran.
        private var occurrenceOutputs: [String: [String: String]] = [:]
        private var online = true
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
        /// Each constraint whose `satisfy` runs, with the runs waiting for it, the one that
        /// started it first: one at a time per constraint across the run of one-shot jobs and
        /// the occurrences (SPEC 5.6), its end told to each of them.
        private var satisfying: [String: [String]] = [:]
        private var timer: (date: Date, task: Task<Void, Never>)?
        /// Runs closed since retention was last applied, and when that was: reading every run
        /// record after each occurrence would cost more than the occurrence.
        private var closedSincePrune = 0
        /// Occurrences of this runner's life that failed (blocked included): `run` exits 1.
        private(set) var failedOccurrences = 0
        private var lastPrune = Date.distantPast
        /// The finished runs retention chooses from, read once and kept up to date as runs end.
        private var finishedRuns: FinishedRuns

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

        init(runner: Runner, main: Scheduler, timetable: Timetable, online: Bool, finishedRuns: FinishedRuns)
        {
            self.runner = runner
            self.finishedRuns = finishedRuns
            self.main = main
            self.timetable = timetable
            self.workload = runner.workload
            self.online = online
            self.pacing = CommitPacing(runner.options.commitPacing)
            let mailbox = runner.mailbox
            self.alarm = PacingAlarm { mailbox.yield(.paced($0)) }
        }

        deinit { alarm.stop() }

        /// Whether the loop is over: nothing runs or waits to be stored, and either a stop was
        /// asked for or, when not serving, every job and due occurrence is final.
        var isDone: Bool {
            // Once a commit failed, nothing more is stored and the effects of the failed
            // decision never happen (an attempt decided there never starts, so the scheduler
            // would wait for its end forever): done once every attempt that did start has ended.
            if storeFailure != nil { return inFlight == 0 && attemptTasks.isEmpty }
            guard inFlight == 0, held.isEmpty, main.isIdle, occurrenceRuns.isEmpty || stopSignal != nil else {
                return false
            }
            guard occurrenceRuns.values.allSatisfy({ $0.scheduler.isIdle }) else { return false }
            if stopSignal != nil { return true }
            return !runner.options.serve && main.isFinished && waiting.isEmpty
        }

        /// Resumes occurrences a dead or stopped runner left unfinished, then takes what the
        /// timetable says is due now.
        func start(opening decision: consuming Decision, unfinished: [(Occurrence, RunSnapshot)]) {
            for (occurrence, snapshot) in unfinished {
                guard let definition = definition(occurrence.jobID) else { continue }
                let (scheduler, resumed) = Scheduler.resume(
                    snapshot, plan: occurrencePlan(definition), runnerPID: runner.options.runnerPID,
                    suspended: main.suspensions, pendingRequests: [], options: runner.schedulerOptions,
                    random: SystemRandomSource(), inputs: openingInputs(snapshot.run.id),
                    now: runner.clock.now())
                timetable.resumed(occurrence)
                track(snapshot.run.id, occurrence, scheduler)
                decision.append(resumed)
            }
            decision.append(tickTimetable())
            submit(decision)
            closeFinishedRuns()
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
                take([input], in: runID)
            case .sideTaskEnded(let id, let runID, let input):
                sideTasks[id] = nil
                if case .satisfyEnded(let name, _) = input {
                    satisfyEnded(name, input)
                } else if let runID {
                    if case .probed(let value) = input {
                        // Every run learns the answer; only the run that asked judges on it.
                        online = value
                        takeEverywhere([.connectivity(online: value)])
                    }
                    take([input], in: runID)
                } else {
                    if case .connectivity(let value) = input { online = value }
                    takeEverywhere([input])
                }
            case .broadcast(let input):
                if case .connectivity(let value) = input { online = value }
                takeEverywhere([input])
            case .durable(.success, let effects):
                committed()
                perform(effects)
            case .durable(.failure(let error), _):
                committed()
                if storeFailure == nil {
                    storeFailure = error
                    // A notice: the run's caller reports the failure to the user in its own words.
                    runner.logger.notice("cannot store state; stopping", metadata: ["error": "\(error)"])
                }
                stop(SIGTERM)
            case .wake:
                timer = nil
                takeEverywhere([.tick])
                if stopSignal == nil && runner.options.serve { submit(tickTimetable()) }
            case .poke:
                if stopSignal == nil { readStore() }
            case .stop(let signal):
                stop(signal)
            case .reload(let reloaded, let periodic):
                workload = reloaded
                timetable.reload(periodic)
                // An occurrence held for its needs whose job is gone never runs (its definition
                // as first loaded would otherwise start it once its needs are final).
                waiting.removeAll { !timetable.contains($0.jobID) }
                if stopSignal == nil { submit(tickTimetable()) }
            case .paced(let number):
                // Over, whatever the clocks say: no other message may come to end it.
                if freshWait?.alarm == number { freshWait?.until = .now }
            }
            closeFinishedRuns()
            rearmTimer()
            flushIfDue()
        }

        /// A job's definition as last loaded; a one-shot job of the run that a reload removed
        /// keeps the definition it started with.
        private func definition(_ id: String) -> JobDefinition? {
            workload.job(id) ?? runner.workload.job(id)
        }

        // MARK: Runs

        /// Hands inputs to the scheduler of a run and submits what it decided.
        private func take(_ inputs: [SchedulerInput], in runID: String) {
            // An input of a run already closed (a late probe answer) goes nowhere, and leaves
            // nothing on the slot board.
            guard !inputs.isEmpty, runID == main.run.id || occurrenceRuns[runID] != nil else { return }
            let now = runner.clock.now()
            // Alone, the run of one-shot jobs needs no board (the path of 100,000 jobs): the
            // board is emptied when the last occurrence closes.
            let shared = !occurrenceRuns.isEmpty
            let inputs =
                shared ? slots.news(for: runID).map { [.slotsElsewhere($0)] + inputs } ?? inputs : inputs
            var freed: [String] = []
            if runID == main.run.id {
                submit(main.handle(inputs, now: now))
                if shared { freed = slots.update(runID, taken: main.slotsTaken, wanting: main.slotsWanted) }
            } else if var entry = occurrenceRuns[runID] {
                let decision = entry.scheduler.handle(inputs, now: now)
                occurrenceRuns[runID] = entry
                touched.insert(runID)
                wakes[runID] = entry.scheduler.nextWakeDate
                submit(decision)
                freed = slots.update(
                    runID, taken: entry.scheduler.slotsTaken, wanting: entry.scheduler.slotsWanted)
            }
            // Runs waiting for a slot this one freed may start now (told what is held first).
            for other in freed where stopSignal == nil {
                if let news = slots.news(for: other) { take([.slotsElsewhere(news)], in: other) }
            }
        }

        private func takeEverywhere(_ inputs: [SchedulerInput]) {
            take(inputs, in: main.run.id)
            for runID in occurrenceRuns.keys.sorted() { take(inputs, in: runID) }
        }

        /// Closes the runs whose jobs are all final: the main run once, occurrence runs as they
        /// end, which may let queued occurrences and occurrences that wait on needs start.
        private func closeFinishedRuns() {
            var decision = Decision()
            let now = runner.clock.now()
            // An operator's `retry` or `skip` reopens a closed run under `serve`: it closes
            // again once its jobs are final.
            if mainClosed && !main.run.state.isFinal && stopSignal == nil { mainClosed = false }
            if !mainClosed && main.isFinished && main.isIdle {
                mainClosed = true
                decision.append(main.close(now: now))
            }
            let looked = touched.sorted()
            touched = []
            for runID in looked {
                guard var entry = occurrenceRuns[runID], entry.scheduler.isFinished, entry.scheduler.isIdle
                else {
                    continue
                }
                occurrenceRuns[runID] = nil
                wakes[runID] = nil
                slots.remove(runID)
                decision.append(entry.scheduler.close(now: now))
                if entry.scheduler.run.state == .failed { failedOccurrences += 1 }
                let jobID = entry.occurrence.jobID
                if entry.scheduler.run.state == .succeeded {
                    occurrenceOutputs[jobID] = entry.scheduler.outputs(of: jobID) ?? [:]
                } else {
                    occurrenceOutputs[jobID] = nil
                }
                if let record = timetable.recordResult(
                    of: entry.occurrence, runID: runID, state: entry.scheduler.run.state)
                {
                    decision.changes.append(.putSchedule(record))
                }
                decision.append(begin(timetable.ended(entry.occurrence), now: now))
            }
            if occurrenceRuns.isEmpty && !slots.isEmpty {
                // The run of one-shot jobs is alone again: it learns that nobody else holds a
                // slot, and decides without the board from now on.
                let news = slots.news(for: main.run.id)
                slots = SlotBoard()
                if let news { take([.slotsElsewhere(news)], in: main.run.id) }
            }
            if !decision.isEmpty {
                // The runs this decision finishes count among those kept (`retention.runs`):
                // noted now, before pruning, rather than when the decision is stored.
                finishedRuns.note(decision.changes)
                decision.append(pruneIfDue(now: now))
            }
            if !waiting.isEmpty && stopSignal == nil {
                let due = waiting
                waiting = []
                for occurrence in due { decision.append(startOccurrence(occurrence, now: now)) }
            }
            if !decision.isEmpty { submit(decision) }
        }

        /// Applies retention once a tenth of the kept number of runs has closed since the last
        /// time, or a minute has passed: the store holds at most that many runs more than the limit.
        private func pruneIfDue(now: Date) -> Decision {
            closedSincePrune += 1
            let batch = max(1, workload.retention.runs / 10)
            guard closedSincePrune >= batch || now.timeIntervalSince(lastPrune) >= 60 else {
                return Decision()
            }
            closedSincePrune = 0
            lastPrune = now
            return prune(now: now)
        }

        /// Finished runs beyond `retention:`, deleted with their logs (SPEC 3.1), so a `serve`
        /// left alone for months keeps a bounded store.
        private func prune(now: Date) -> Decision {
            var decision = Decision()
            let keeping = Set([main.run.id] + occurrenceRuns.keys)
            let ids = finishedRuns.prune(workload.retention, now: now, keeping: keeping)
            guard !ids.isEmpty else { return decision }
            decision.changes = ids.map { StoreChange.deleteRun($0) }
            decision.effects = [.removeLogs(runIDs: ids)]
            return decision
        }

        /// What the timetable says is due now, as store changes and runs started.
        private func tickTimetable() -> Decision {
            guard stopSignal == nil else { return Decision() }
            let now = runner.clock.now()
            return begin(timetable.tick(now: now), now: now)
        }

        /// Acts on a timetable decision: records, skipped and missed occurrences, replaced ones
        /// ended, new ones started — all in one decision, so the schedule records are durable
        /// with the runs they started.
        private func begin(_ plan: Timetable.Decision, now: Date) -> Decision {
            var decision = Decision()
            decision.changes += plan.records.map { StoreChange.putSchedule($0) }
            for occurrence in plan.skipped { decision.append(record(occurrence, as: .skipped, now: now)) }
            for occurrence in plan.missed { decision.append(record(occurrence, as: .missed, now: now)) }
            for occurrence in plan.replaced {
                let runID = Self.runID(of: occurrence)
                take(
                    [
                        .operatorRequests(
                            [
                                OperatorRequest(
                                    id: 0, kind: .cancel, jobID: occurrence.jobID, requestedAt: now)
                            ],
                            stored: false)
                    ], in: runID)
            }
            for occurrence in plan.starts { decision.append(startOccurrence(occurrence, now: now)) }
            return decision
        }

        /// An occurrence that does not run: recorded as a finished run of its own.
        private func record(_ occurrence: Occurrence, as state: RunState, now: Date) -> Decision {
            var run = RunRecord(
                id: Self.runID(of: occurrence), state: state, startedAt: now, finishedAt: now,
                jobIDs: [occurrence.jobID], runnerPID: runner.options.runnerPID)
            run.occurrenceOf = occurrence.jobID
            run.scheduledAt = occurrence.scheduledAt
            var decision = Decision()
            decision.changes.append(.putRun(run))
            if state == .skipped {
                decision.effects.append(
                    .emit(
                        RunEvent(
                            time: now, run: run.id, job: occurrence.jobID, kind: .disabled,
                            reason: "the last occurrence still runs")))
            }
            return decision
        }

        /// Starts an occurrence's run, or holds it while a one-shot job it needs is not final, or
        /// records it blocked when a need ended badly.
        private func startOccurrence(_ occurrence: Occurrence, now: Date) -> Decision {
            guard let definition = definition(occurrence.jobID) else { return Decision() }
            for need in definition.needs {
                if timetable.contains(need) {
                    // An occurrence of the needed job under way, or none finished yet: wait for it.
                    let last = timetable.record(need)?.lastResult
                    if timetable.isRunning(need) || last == nil { return hold(occurrence) }
                    if last != .succeeded { return blocked(occurrence, by: need, now: now) }
                } else if let record = main.record(need) {
                    if !record.state.isFinal { return hold(occurrence) }
                    if !record.satisfiesNeeds { return blocked(occurrence, by: need, now: now) }
                }
            }
            return materialize(occurrence, now: now)
        }

        /// Holds an occurrence until its needs are final; its schedule record lists it as
        /// waiting until then, so a crash does not lose it.
        private func hold(_ occurrence: Occurrence) -> Decision {
            waiting.append(occurrence)
            var decision = Decision()
            if let record = timetable.hold(occurrence) { decision.changes.append(.putSchedule(record)) }
            return decision
        }

        /// An occurrence's run, started (or, when the runner stops, left for the next one).
        private func materialize(_ occurrence: Occurrence, now: Date) -> Decision {
            guard let definition = definition(occurrence.jobID) else { return Decision() }
            let runID = Self.runID(of: occurrence)
            var (scheduler, decision) = Scheduler.newRun(
                plan: occurrencePlan(definition), runID: runID, runnerPID: runner.options.runnerPID,
                suspended: main.suspensions, options: runner.schedulerOptions, random: SystemRandomSource(),
                inputs: openingInputs(runID), occurrence: occurrence, now: now)
            // No longer waiting, in the commit that stores its run.
            if let record = timetable.release(occurrence) { decision.changes.append(.putSchedule(record)) }
            if stopSignal != nil { decision.append(scheduler.handle(.stop, now: now)) }
            track(runID, occurrence, scheduler)
            return decision
        }

        /// Takes in an occurrence run under way, with what is kept about it: that it may have
        /// finished, when it wants to be woken (a resumed one may wait for a backoff), and the
        /// slots it holds.
        private func track(_ runID: String, _ occurrence: Occurrence, _ scheduler: Scheduler) {
            occurrenceRuns[runID] = (occurrence, scheduler)
            touched.insert(runID)
            wakes[runID] = scheduler.nextWakeDate
            _ = slots.update(runID, taken: scheduler.slotsTaken, wanting: scheduler.slotsWanted)
        }

        /// What an occurrence run being opened is told first: what the other runs hold of the
        /// pipelines' slots (the run of one-shot jobs as it is now), and that the machine is
        /// offline if it is.
        private func openingInputs(_ runID: String) -> [SchedulerInput] {
            _ = slots.update(main.run.id, taken: main.slotsTaken, wanting: main.slotsWanted)
            return [.slotsElsewhere(slots.opening(runID))] + (online ? [] : [.connectivity(online: false)])
        }

        /// An occurrence whose need ended badly: a run of its own, its job blocked.
        private func blocked(_ occurrence: Occurrence, by need: String, now: Date) -> Decision {
            var run = RunRecord(
                id: Self.runID(of: occurrence), state: .failed, startedAt: now, finishedAt: now,
                jobIDs: [occurrence.jobID], runnerPID: runner.options.runnerPID)
            run.occurrenceOf = occurrence.jobID
            run.scheduledAt = occurrence.scheduledAt
            var job = JobRecord(
                jobID: occurrence.jobID, pipeline: definition(occurrence.jobID)?.pipeline ?? "")
            job.state = .blocked
            job.reason = .ended(.blockedBy(need))
            job.finishedAt = now
            var decision = Decision()
            decision.changes = [.putRun(run), .putJob(runID: run.id, job)]
            decision.effects = [
                .emit(
                    RunEvent(
                        time: now, run: run.id, job: occurrence.jobID, kind: .blocked,
                        reason: job.reason?.words))
            ]
            failedOccurrences += 1
            // It ended as it was decided: the job's next occurrences are not held behind it.
            if let record = timetable.recordResult(of: occurrence, runID: run.id, state: .failed) {
                decision.changes.append(.putSchedule(record))
            }
            decision.append(begin(timetable.ended(occurrence), now: now))
            return decision
        }

        /// An occurrence's plan: the periodic job alone; its needs were judged before it started.
        private func occurrencePlan(_ definition: JobDefinition) -> RunPlan {
            var job = RunPlan.Job(definition, in: workload)
            job.needs = []
            return RunPlan(jobs: [job], pipelines: Array(workload.pipelines.values))
        }

        /// What an occurrence's attempt receives of its job's needs (SPEC 5.7, 5.8): the outputs
        /// of a one-shot job in the current run, and those of a periodic job's latest
        /// occurrence, as they are when the attempt starts (a retry after the needed job's next
        /// occurrence failed gets none of its outputs: that occurrence gave none).
        private func outputsOfNeeds(of job: JobDefinition) -> [String: [String: String]] {
            var needed: [String: [String: String]] = [:]
            for need in job.needs {
                let values =
                    timetable.contains(need) ? latestOccurrenceOutputs(of: need) : main.outputs(of: need)
                if let values, !values.isEmpty { needed[need] = values }
            }
            return needed
        }

        /// The outputs of a periodic job's latest occurrence if it succeeded; for one an earlier
        /// runner ran, read once from its stored run.
        private func latestOccurrenceOutputs(of jobID: String) -> [String: String]? {
            if let known = occurrenceOutputs[jobID] { return known }
            guard let record = timetable.record(jobID), record.lastResult == .succeeded,
                let runID = record.lastRunID
            else { return nil }
            // Read before the loop began (store reads are async); a run unreadable then (pruned,
            // or a store error) gives nothing rather than stopping.
            let values = runner.outputsReadEarlier(runID: runID, jobID: jobID)
            occurrenceOutputs[jobID] = values
            return values
        }

        /// An occurrence's run id: its scheduled date, sortable, then the job.
        static func runID(of occurrence: Occurrence) -> String {
            Runner.compactTimestamp(occurrence.scheduledAt) + "-" + occurrence.jobID
        }

        // MARK: Store and effects

        /// Stores a decision's changes; its effects follow once they are durable. It is held
        /// until ``flushIfDue()`` hands it to the store (at the end of each message).
        func submit(_ decision: Decision) {
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
            finishedRuns.note(decision.changes)
            inFlight += 1
            commitSubmitted = .now
            let mailbox = runner.mailbox
            let effects = decision.effects
            runner.store.submit(decision.changes) { result in mailbox.yieldFirst(.durable(result, effects)) }
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
            // Occurrences held for their needs become runs that the next runner resumes.
            let held = waiting
            waiting = []
            takeEverywhere([.stop])
            var decision = Decision()
            for occurrence in held { decision.append(materialize(occurrence, now: runner.clock.now())) }
            submit(decision)
        }

        /// Performs durable effects; inputs known at once go back to their runs.
        private func perform(_ effects: [Effect]) {
            for effect in effects {
                switch effect {
                case .emit(let event):
                    runner.observer.record(event)
                case .emitNewJobs(let jobs):
                    for event in jobs.events { runner.observer.record(event) }
                case .startAttempt(let order):
                    guard stopSignal == nil, let job = definition(order.jobID) else {
                        // Decided before the stop, never begun.
                        take(
                            [
                                .attemptEnded(
                                    jobID: order.jobID, attempt: order.attempt,
                                    AttemptResult(
                                        outcome: .interrupted, reason: "the runner stopped before it started")
                                )
                            ], in: order.runID)
                        continue
                    }
                    startAttempt(order, job: job)
                case .checkConstraints(let runID, let jobID, let names):
                    let constraints = names.compactMap { workload.constraints[$0] }
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
                    if let runs = satisfying[name] {
                        if !runs.contains(runID) { satisfying[name] = runs + [runID] }
                        continue
                    }
                    satisfying[name] = [runID]
                    let constraint = workload.constraints[name]
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
                neededOutputs: order.runID == main.run.id ? order.neededOutputs : outputsOfNeeds(of: job),
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
                running = .task(Task { ended(await handler.run(request)) })
            }
            let key = AttemptKey(runID: order.runID, jobID: order.jobID)
            attemptTasks[key] = (order.attempt, running, .now)
            fresh.insert(key)
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

        /// A constraint's `satisfy` ended: every run that waits for it is told, and those that
        /// did not start it get a copy of its output where their failed attempts point.
        private func satisfyEnded(_ name: String, _ input: SchedulerInput) {
            let runs = satisfying.removeValue(forKey: name) ?? []
            if let first = runs.first, runs.count > 1 {
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
            for runID in runs { take([input], in: runID) }
        }

        /// Asks the connectivity probe at once for run `runID`; its answer goes to every run.
        /// Without a probe the machine counts as online.
        private func probeNow(for runID: String) {
            let mailbox = runner.mailbox
            let id = nextSideTask
            nextSideTask += 1
            guard let probe = runner.probe else {
                mailbox.yield(.sideTaskEnded(id, run: runID, .probed(online: online)))
                return
            }
            sideTasks[id] = Task {
                mailbox.yield(.sideTaskEnded(id, run: runID, .probed(online: await probe.isOnline())))
            }
        }

        /// Suspensions and operator requests as the store holds them now, read by a task (store
        /// reads are async) that hands them back as messages, as the store check always did.
        private func readStore() {
            let store = runner.store.base
            let mailbox = runner.mailbox
            let logger = runner.logger
            let runIDs = [main.run.id] + occurrenceRuns.keys.sorted()
            // Unstructured: it only reads and posts messages; one that ends after the loop posts
            // to nobody. A request read twice (two pokes) is applied once (its id is kept).
            Task {
                do {
                    let suspended = try await store.pipelines().mapValues(\.suspended)
                    mailbox.yield(.broadcast(.suspensions(suspended)))
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

        private func rearmTimer() {
            var dates = [main.nextWakeDate, wakes.values.min()]
            if runner.options.serve { dates.append(timetable.nextWakeDate) }
            let wake = stopSignal == nil ? dates.compactMap { $0 }.min() : nil
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

        /// Closes what a stop left open: the main run if it was not closed as it finished, and
        /// the occurrence runs under way, each `stopped` (the next runner resumes them).
        func closeAll() -> Decision {
            var decision = Decision()
            let now = runner.clock.now()
            if !mainClosed {
                mainClosed = true
                decision.append(main.close(now: now))
            }
            for runID in occurrenceRuns.keys.sorted() {
                guard var entry = occurrenceRuns.removeValue(forKey: runID) else { continue }
                decision.append(entry.scheduler.close(now: now))
            }
            return decision
        }
    }
}
