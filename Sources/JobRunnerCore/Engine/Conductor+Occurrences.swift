import DequeModule
import Foundation

/// Occurrences of periodic jobs: started when the timetable says, held for their needs,
/// recorded when they do not run, closed as they end.
extension Conductor {
    /// What the timetable says is due now, as store changes and runs started.
    mutating func tickTimetable(now: Date) {
        guard !stopped else { return }
        begin(timetable.tick(now: now), now: now)
    }

    /// Acts on a timetable decision: records, skipped and missed occurrences, replaced ones
    /// ended, new ones started — all in one decision, so the schedule records are durable with
    /// the runs they started.
    mutating func begin(_ plan: Timetable.Decision, now: Date) {
        decision.changes += plan.records.map { StoreChange.putSchedule($0) }
        for occurrence in plan.skipped { record(occurrence, as: .skipped, now: now) }
        for occurrence in plan.missed { record(occurrence, as: .missed, now: now) }
        // One line per job, however many dates it missed.
        var missedByJob: [String: Int] = [:]
        for occurrence in plan.missed { missedByJob[occurrence.jobID, default: 0] += 1 }
        for (jobID, count) in missedByJob.sorted(by: { $0.key < $1.key }) {
            decision.effects.append(
                .reportMissed(jobID: jobID, count: count, catchUp: timetable.catchUp(of: jobID) ?? .latest))
        }
        for occurrence in plan.replaced {
            take([.replaced(jobID: occurrence.jobID)], in: Self.runID(of: occurrence), now: now)
        }
        for occurrence in plan.starts { startOccurrence(occurrence, now: now) }
    }

    /// An occurrence that does not run: recorded as a finished run of its own.
    mutating func record(_ occurrence: Occurrence, as state: RunState, now: Date) {
        var run = RunRecord(
            id: Self.runID(of: occurrence), state: state, startedAt: now, finishedAt: now,
            jobIDs: [occurrence.jobID], runnerPID: options.runnerPID)
        run.occurrenceOf = occurrence.jobID
        run.scheduledAt = occurrence.scheduledAt
        decision.changes.append(.putRun(run))
        if state == .skipped {
            decision.effects.append(
                .emit(
                    RunEvent(
                        time: now, run: run.id, job: occurrence.jobID, kind: .disabled,
                        reason: "the previous occurrence still runs (overlap: skip)",
                        occurrence: occurrence.scheduledAt)))
        }
    }

    /// Starts an occurrence's run, or holds it while a job it needs is not final, or records it
    /// blocked when a need ended badly, or postpones it while too many runs are under way (and
    /// behind those postponed before it, unless it is the one of them whose turn came).
    mutating func startOccurrence(_ occurrence: Occurrence, now: Date, itsTurn: Bool = false) {
        guard let definition = definition(occurrence.jobID) else { return }
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
        if let limit = options.maxOccurrenceRuns, !stopped,
            occurrenceRuns.count >= limit || (!itsTurn && !postponed.isEmpty)
        {
            return postpone(occurrence)
        }
        materialize(occurrence, now: now)
    }

    /// Keeps an occurrence until fewer than ``ConductorOptions/maxOccurrenceRuns`` runs are
    /// under way; its schedule record lists it as waiting until then, as for one held for its
    /// needs.
    mutating func postpone(_ occurrence: Occurrence) {
        postponed.append(occurrence)
        if let record = timetable.hold(occurrence) { decision.changes.append(.putSchedule(record)) }
    }

    /// Starts postponed occurrences while there is room, first come first.
    mutating func startPostponed(now: Date) {
        guard let limit = options.maxOccurrenceRuns else { return }
        while !stopped, occurrenceRuns.count < limit, let next = postponed.popFirst() {
            // Its needs are judged now, as for one held for them.
            startOccurrence(next, now: now, itsTurn: true)
        }
    }

    /// Holds an occurrence until its needs are final; its schedule record lists it as waiting
    /// until then, so a crash does not lose it.
    mutating func hold(_ occurrence: Occurrence) {
        waiting.append(occurrence)
        if let record = timetable.hold(occurrence) { decision.changes.append(.putSchedule(record)) }
    }

    /// An occurrence's run, started (or, after a stop, left for the next runner).
    mutating func materialize(_ occurrence: Occurrence, now: Date) {
        guard let definition = definition(occurrence.jobID) else { return }
        let runID = Self.runID(of: occurrence)
        // After a stop it is only stored, for the next runner: told so before it could start.
        let (scheduler, opening) = Scheduler.newRun(
            plan: occurrencePlan(definition), runID: runID, runnerPID: options.runnerPID,
            suspended: main.suspensions, options: options.scheduler, random: nextSource(),
            inputs: openingInputs(runID) + (stopped ? [.stop] : []), occurrence: occurrence, now: now)
        decision.append(opening)
        // No longer waiting, in the commit that stores its run.
        if let record = timetable.release(occurrence) { decision.changes.append(.putSchedule(record)) }
        track(runID, occurrence, scheduler)
    }

    /// An occurrence whose need ended badly: a run of its own, its job blocked.
    mutating func blocked(_ occurrence: Occurrence, by need: String, now: Date) {
        var run = RunRecord(
            id: Self.runID(of: occurrence), state: .failed, startedAt: now, finishedAt: now,
            jobIDs: [occurrence.jobID], runnerPID: options.runnerPID)
        run.occurrenceOf = occurrence.jobID
        run.scheduledAt = occurrence.scheduledAt
        if occurrence.manual { run.manual = true }
        var job = JobRecord(jobID: occurrence.jobID, pipeline: definition(occurrence.jobID)?.pipeline ?? "")
        job.state = .blocked
        job.reason = .ended(.blockedBy(need))
        job.finishedAt = now
        decision.changes += [.putRun(run), .putJob(runID: run.id, job)]
        decision.effects.append(
            .emit(
                RunEvent(
                    time: now, run: run.id, job: occurrence.jobID, kind: .blocked, reason: job.reason?.words,
                    occurrence: occurrence.scheduledAt))
        )
        failedOccurrences += 1
        notifyIfDue(run, now: now)
        // It ended as it was decided: the job's next occurrences are not held behind it.
        if let record = timetable.recordResult(of: occurrence, runID: run.id, state: .failed) {
            decision.changes.append(.putSchedule(record))
        }
        begin(timetable.ended(occurrence), now: now)
    }

    /// An occurrence's plan: the periodic job alone; its needs were judged before it started.
    func occurrencePlan(_ definition: JobDefinition) -> RunPlan {
        var job = RunPlan.Job(definition, in: workload)
        job.needs = []
        return RunPlan(
            jobs: [job], pipelineTable: occurrencePipelines.table, limits: occurrencePipelines.limits)
    }

    /// Closes the runs whose jobs are all final: the run of one-shot jobs once, occurrence runs
    /// as they end, which may let queued occurrences and occurrences that wait on needs start.
    mutating func closeFinishedRuns(now: Date) {
        let before = decision.changes.count + decision.effects.count
        // An operator's `retry` or `skip` reopens a closed run under `serve`: it closes again
        // once its jobs are final.
        if mainClosed && !main.run.state.isFinal && !stopped { mainClosed = false }
        if !mainClosed && main.isFinished && main.isIdle {
            mainClosed = true
            decision.append(main.close(now: now))
            notifyIfDue(main.run, now: now)
        }
        let looked = touched.sorted()
        touched = []
        for runID in looked {
            guard var entry = occurrenceRuns[runID], entry.scheduler.isFinished, entry.scheduler.isIdle else {
                continue
            }
            occurrenceRuns[runID] = nil
            wakes[runID] = nil
            slots.remove(runID)
            decision.append(entry.scheduler.close(now: now))
            let state = entry.scheduler.run.state
            if state == .failed { failedOccurrences += 1 }
            notifyIfDue(entry.scheduler.run, now: now)
            let jobID = entry.occurrence.jobID
            occurrenceOutputs[jobID] = state == .succeeded ? entry.scheduler.outputs(of: jobID) ?? [:] : nil
            if let record = timetable.recordResult(of: entry.occurrence, runID: runID, state: state) {
                decision.changes.append(.putSchedule(record))
            }
            begin(timetable.ended(entry.occurrence), now: now)
        }
        if occurrenceRuns.isEmpty && !slots.isEmpty {
            // The run of one-shot jobs is alone again: it learns that nobody else holds a slot,
            // and decides without the board from now on.
            let news = slots.news(for: main.run.id)
            slots = SlotBoard()
            if let news { take([.slotsElsewhere(news)], in: main.run.id, now: now) }
        }
        if decision.changes.count + decision.effects.count > before {
            // The runs this closes count among those kept (`retention.runs`): noted now, before
            // pruning, rather than when the decision is handed over.
            finishedRuns.note(decision.changes)
            pruneIfDue(now: now)
        }
        if !waiting.isEmpty && !stopped {
            let due = waiting
            waiting = []
            for occurrence in due { startOccurrence(occurrence, now: now) }
        }
        startPostponed(now: now)
    }

    // MARK: Outputs of needs

    /// What an occurrence's attempt receives of its job's needs (SPEC 5.7, 5.8): the outputs of
    /// a one-shot job in the current run, and those of a periodic job's latest occurrence, as
    /// they are when the attempt starts (a retry after the needed job's next occurrence failed
    /// gets none of its outputs: that occurrence gave none).
    /// - Parameter read: reads a stored run's outputs of a job, for a periodic job an earlier
    ///   runner ran; read once, then kept.
    public mutating func outputsOfNeeds(
        of job: JobDefinition, reading read: (_ runID: String, _ jobID: String) -> [String: String]?
    ) -> [String: [String: String]] {
        var needed: [String: [String: String]] = [:]
        for need in job.needs {
            let values =
                timetable.contains(need)
                ? latestOccurrenceOutputs(of: need, reading: read) : main.outputs(of: need)
            if let values, !values.isEmpty { needed[need] = values }
        }
        return needed
    }

    private mutating func latestOccurrenceOutputs(
        of jobID: String, reading read: (String, String) -> [String: String]?
    ) -> [String: String]? {
        if let known = occurrenceOutputs[jobID] { return known }
        guard let record = timetable.record(jobID), record.lastResult == .succeeded,
            let runID = record.lastRunID
        else { return nil }
        // An unreadable run (pruned, or a store error) gives nothing rather than stopping.
        let values = read(runID, jobID) ?? [:]
        occurrenceOutputs[jobID] = values
        return values
    }

    // MARK: Shared satisfy

    /// A run asks for a constraint's `satisfy`: true when it is to start now, false when one
    /// already runs for another run, whose end this run is told too (SPEC 5.6).
    public mutating func joinSatisfy(runID: String, constraint name: String) -> Bool {
        if let runs = satisfying[name] {
            if !runs.contains(runID) { satisfying[name] = runs + [runID] }
            return false
        }
        satisfying[name] = [runID]
        return true
    }

    /// The runs waiting for a constraint's `satisfy`, the one that started it first.
    public func satisfyWaiters(_ name: String) -> [String] { satisfying[name] ?? [] }

    // MARK: Retention

    /// Applies retention once a tenth of the smallest kept number of runs (``pruneBatch``) has
    /// closed since the last time, or a minute has passed: the store holds at most that many
    /// runs more than a limit.
    mutating func pruneIfDue(now: Date) {
        closedSincePrune += 1
        guard closedSincePrune >= pruneBatch || now.timeIntervalSince(lastPrune) >= 60 else { return }
        closedSincePrune = 0
        lastPrune = now
        // Finished runs beyond `retention:`, deleted with their logs (SPEC 3.1), so a `serve`
        // left alone for months keeps a bounded store.
        let keeping = Set(runIDs)
        // The runs of one-shot jobs and each periodic job's occurrences apart, a periodic job by
        // its own `retention:` when it has one (SPEC 5.12).
        let workload = self.workload
        let ids = finishedRuns.prune(
            { group in
                group.isEmpty ? workload.retention : workload.job(group)?.retention ?? workload.retention
            },
            now: now, keeping: keeping)
        guard !ids.isEmpty else { return }
        decision.changes += ids.map { StoreChange.deleteRun($0) }
        decision.effects.append(.removeLogs(runIDs: ids))
    }
}
