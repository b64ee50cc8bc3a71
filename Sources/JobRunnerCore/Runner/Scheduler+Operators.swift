import Foundation

/// A dead runner's attempts, and the operator's requests: retry, skip, cancel.
extension Scheduler {
    // MARK: Recovery

    /// The runner that worked on the run died: each running attempt is recorded `interrupted`
    /// and its job starts again without using up an attempt (SPEC 5.9), unless the job runs
    /// code inside the runner and runners died during its attempts ``crashLoopLimit`` times in
    /// a row.
    mutating func runnerDied(now: Date) {
        // Only jobs with a running attempt can have one to end: found from the attempts, in
        // load order, not by looking at every job's record.
        let running = attempts.keys.compactMap { plan.position(of: $0) }.sorted()
            .filter { jobs.state(at: $0) == .running }.map { plan.jobs[$0] }
        for job in running {
            guard var record = jobs[job.id], var attempt = attempts.removeValue(forKey: job.id) else {
                continue
            }
            lanes.attemptEnded(job)
            let reason = AttemptEnd.interrupted(.runnerDied).words
            attempt.outcome = .interrupted
            attempt.finishedAt = now
            attempt.reason = reason
            decision.changes.append(.putAttempt(runID: run.id, attempt))
            emit(
                RunEvent(
                    time: now, run: run.id, job: job.id, attempt: record.attempts, kind: .interrupted,
                    reason: reason))
            // Only code that runs inside the runner can have brought it down; a shell job that
            // ran while someone killed the runner is not to blame.
            if job.runsInRunner { record.crashedInARow += 1 }
            if record.crashedInARow >= Self.crashLoopLimit {
                record.state = .failed
                record.reason = .ended(.crashedTheRunner)
                record.finishedAt = now
                commitFinal(record, job: job)
                emit(
                    RunEvent(
                        time: now, run: run.id, job: job.id, attempt: record.attempts, kind: .failed,
                        reason: record.reason?.words))
                settleDependents(of: record, now: now)
                continue
            }
            record.uncountedAttempts += 1
            record.state = .waiting
            record.reason = .waiting(.interrupted)
            put(record)
            makeReadyIfDue(job, now: now)
        }
    }

    // MARK: Operators

    /// Applies `retry`, `skip` or `cancel` to a job of this run (SPEC 4).
    mutating func apply(_ request: OperatorRequest, now: Date) -> OperatorResult {
        let id = request.jobID
        guard let record = jobs[id], let job = plan.job(id) else {
            return .refused("run \(run.id) has no job '\(id)'")
        }
        switch (request.kind, record.state) {
        case (.cancel, .running), (.skip, .running):
            endAttempt(id, as: .byOperator(request.kind))
            return .terminating(jobID: id)
        case (.cancel, .pending), (.cancel, .waiting), (.skip, .pending), (.skip, .waiting):
            finishEarly(job, reason: .byOperator(request.kind), now: now)
            return .applied("\(id) \(request.kind == .cancel ? "cancelled" : "skipped")")
        case (.skip, .failed), (.skip, .blocked), (.skip, .cancelled):
            var skipped = record
            skipped.state = .skipped
            skipped.reason = .ended(.skippedByOperator)
            skipped.finishedAt = now
            put(skipped)
            emit(RunEvent(time: now, run: run.id, job: id, kind: .skipped, reason: skipped.reason?.words))
            reopen(blockedBehind: id, now: now)
            return .applied("\(id) skipped; the jobs it blocked may go on")
        case (.retry, .blocked):
            // Another chance would block it again at once while a need still stands in the way.
            if let need = blockingNeed(of: job) {
                return .refused(
                    "\(id) is blocked by \(need), which \(jobs[need].map { Self.stands($0.state) } ?? "is unknown"); retry \(need) instead"
                )
            }
            reopen([id], now: now)
            reopen(blockedBehind: id, now: now)
            return .applied("\(id) gets another chance, with any jobs it blocked")
        case (.retry, .failed), (.retry, .cancelled):
            reopen([id], now: now)
            reopen(blockedBehind: id, now: now)
            return .applied("\(id) gets another chance, with any jobs it blocked")
        case (.retry, _):
            return .refused(
                "\(id) \(Self.stands(record.state)); only a failed, blocked or cancelled job can be retried")
        case (.skip, _), (.cancel, _):
            return .refused("\(id) \(Self.stands(record.state, already: true))")
        case (.notify, _):
            return .refused("a notification is no request about a job")
        case (.trigger, _):
            return .refused("\(id) is no periodic job; `trigger` starts occurrences of periodic jobs")
        }
    }

    /// A job's state in a sentence: `is running`, `is already skipped`, but `succeeded` and
    /// `failed` (a job that "is succeeded" reads wrong).
    static func stands(_ state: JobState, already: Bool = false) -> String {
        let adverb = already ? "already " : ""
        switch state {
        case .succeeded, .failed: return adverb + state.rawValue
        default: return "is " + adverb + state.rawValue
        }
    }

    /// Ends a running job's attempt first: once it has ended, the job ends for `reason`.
    mutating func endAttempt(_ id: String, as reason: EndReason) {
        guard let record = jobs[id] else { return }
        stopRequests[id] = reason
        let attempt = attempts[id]
        decision.effects.append(
            .endAttempt(
                runID: run.id, jobID: id, attempt: record.attempts, pid: attempt?.pid,
                pidStartTime: attempt?.pidStartTime))
    }

    /// Ends a job that is not final before its time: at once when it does not run, else once
    /// its attempt has been ended.
    mutating func endEarly(_ id: String, reason: EndReason, now: Date) {
        guard let record = jobs[id], !record.state.isFinal, let job = plan.job(id) else { return }
        if record.state == .running {
            endAttempt(id, as: reason)
        } else {
            finishEarly(job, reason: reason, now: now)
        }
    }

    /// Ends a job that is not (or no longer) running before its time, as an operator (or a
    /// replacing occurrence) asked: `skipped` for a skip, `cancelled` otherwise.
    mutating func finishEarly(_ job: RunPlan.Job, reason: EndReason, now: Date) {
        guard var record = jobs[job.id] else { return }
        let cancelled = reason != .skippedByOperator
        record.state = cancelled ? .cancelled : .skipped
        record.reason = .ended(reason)
        record.finishedAt = now
        record.nextAttemptAt = nil
        commitFinal(record, job: job)
        emit(
            RunEvent(
                time: now, run: run.id, job: job.id, kind: cancelled ? .cancelled : .skipped,
                reason: record.reason?.words))
        if cancelled {
            blockDependents(of: job.id, now: now)
        } else {
            releaseDependents(of: job.id, now: now)
        }
    }

    /// Reopens the jobs that were blocked, directly or through others, because of `id`, and the
    /// `when: always|failure` jobs among their dependents that ended already: they were judged on
    /// needs that are open again, so they are judged again once those are final.
    mutating func reopen(blockedBehind id: String, now: Date) {
        var found: [String] = []
        var pending = Array(plan.dependents(of: id))
        var seen = Set<String>()
        while let job = pending.popLast() {
            guard seen.insert(job).inserted, let record = jobs[job] else { continue }
            let judgedAgain =
                plan.job(job)?.when.waitsForFinalNeeds == true && record.state.isFinal
            guard record.state == .blocked || judgedAgain else { continue }
            found.append(job)
            pending.append(contentsOf: plan.dependents(of: job))
        }
        reopen(found, now: now)
    }

    /// Makes final jobs pending again with a fresh retry budget, then lets each become ready,
    /// or blocked again if another of its needs still stands in the way.
    mutating func reopen(_ ids: [String], now: Date) {
        for id in ids {
            guard var record = jobs[id], record.state.isFinal, let job = plan.job(id) else { continue }
            record.state = .pending
            record.reason = nil
            record.finishedAt = nil
            record.nextAttemptAt = nil
            record.firstStartedAt = nil
            record.uncountedAttempts = record.attempts
            record.crashedInARow = 0
            put(record)
            finalCount -= 1
            lanes.opened(job)
            emit(RunEvent(time: now, run: run.id, job: id, kind: .queued))
        }
        // A `when: failure|always` job not started yet counted these needs as met when they
        // ended; they are open again, so it waits for them again.
        let reopened = Set(ids)
        for id in ids {
            for dependent in plan.dependents(of: id) where !reopened.contains(dependent) {
                guard let job = plan.job(dependent), job.when.waitsForFinalNeeds,
                    let record = jobs[dependent],
                    !record.state.isFinal, record.state != .running
                else { continue }
                unmetNeeds[dependent] += 1
                lanes.unready(job)
            }
        }
        for id in ids {
            guard let job = plan.job(id), jobs[id]?.state == .pending else { continue }
            unmetNeeds[id] =
                job.needs.filter { need in
                    jobs[need].map { job.when.waitsForFinalNeeds ? $0.state.isFinal : $0.satisfiesNeeds }
                        != true
                }.count
            if let failedNeed = blockingNeed(of: job) {
                block([(id, failedNeed)], now: now)
            } else {
                makeReadyIfDue(job, now: now)
            }
        }
    }

    /// A finished run that has open jobs again is `stopped`: the next `run` resumes it. One whose
    /// jobs are all still final is judged again: skipping its only failed job makes it
    /// `succeeded`, as it would have been had the job been skipped before the run ended.
    mutating func reopenRunIfNeeded(now: Date) {
        guard run.state.isFinal else { return }
        if !isFinished {
            run.state = .stopped
            run.finishedAt = nil
            decision.changes.append(.putRun(run))
        } else if [.succeeded, .failed].contains(run.state), run.state != verdict {
            run.state = verdict
            run.finishedAt = now
            decision.changes.append(.putRun(run))
            emit(RunEvent(time: now, run: run.id, kind: .runFinished, state: run.state.rawValue))
        }
    }

    /// How the run ends once every job is final: `failed` if a job's end fails it.
    var verdict: RunState { jobs.values.contains(where: \.failsRun) ? .failed : .succeeded }
}
