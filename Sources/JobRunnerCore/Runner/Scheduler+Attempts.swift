import Foundation

/// How jobs become ready, start, end their attempts and settle their dependents.
extension Scheduler {
    // MARK: Readiness and starts

    mutating func makeReadyIfDue(_ job: RunPlan.Job, now: Date) {
        // The counts first: they are cheaper to look at than a record is to make.
        guard unmetNeeds[job.id] == 0, !lanes.isDelayed(job.id), var record = jobs[job.id],
            !record.state.isFinal, record.state != .running
        else { return }
        if job.when == .failure, !job.needs.contains(where: { jobs[$0]?.failsRun == true }) {
            // A cleanup or notification job with nothing to clean up after (SPEC 3, `when`).
            record.state = .skipped
            record.reason = .ended(.noNeedFailed)
            record.finishedAt = now
            commitFinal(record, job: job)
            emit(RunEvent(time: now, run: run.id, job: job.id, kind: .skipped, reason: record.reason?.words))
            releaseDependents(of: job.id, now: now)
            return
        }
        if record.state == .waiting, record.waitingReason == .backoff, let due = record.nextAttemptAt {
            lanes.delay(job, until: due)
            return
        }
        lanes.makeReady(job)
    }

    /// While offline, records each ready job that needs the internet as waiting for it.
    mutating func markInternetWaiters(now: Date) {
        let waiters = lanes.readyJobs.filter { id in
            guard let job = plan.job(id), job.requiresInternet else { return false }
            return jobs[id]?.waitingReason != .internet
        }
        for id in waiters.sorted(by: { plan.order(of: $0) < plan.order(of: $1) }) {
            guard var record = jobs[id] else { continue }
            record.state = .waiting
            record.reason = .waiting(.internet)
            record.waitingSince = now
            put(record)
            emit(
                RunEvent(
                    time: now, run: run.id, job: id, kind: .waiting, reason: WaitingReason.internet.words))
        }
    }

    mutating func setOnline(_ value: Bool, now: Date) {
        guard value != online else { return }
        online = value
        for name in plan.pipelines.keys.sorted() where plan.pipelines[name]?.requiresInternet == true {
            emit(
                RunEvent(
                    time: now, run: run.id, kind: value ? .resumed : .suspended,
                    reason: WaitingReason.internet.words,
                    pipeline: name))
        }
    }

    /// Starts every ready job that a slot allows, best first.
    mutating func startReadyJobs(now: Date) {
        if !online { markInternetWaiters(now: now) }
        let online = self.online
        // Each start adds two changes and two effects. Room for many at once (a run's opening
        // with an unlimited pipeline) spares copying the lists as they grow; a few are left to
        // the lists' own growth, which stays amortized.
        let room = lanes.roomToStart
        if room >= Self.startsReservedAtOnce {
            decision.changes.reserveCapacity(decision.changes.count + 2 * room)
            decision.effects.reserveCapacity(decision.effects.count + 2 * room)
        }
        while let job = lanes.takeNext(online: online, allowed: { !$0.requiresInternet }) {
            if gate.mustCheck(job) {
                // Constraints are checked before an attempt exists (SPEC 5.6); the job takes no
                // slot meanwhile and comes back to its queue when they hold.
                decision.effects.append(
                    .checkConstraints(runID: run.id, jobID: job.id, constraints: job.constraints))
                continue
            }
            start(job, now: now)
        }
    }

    /// The fewest possible starts for which ``startReadyJobs(now:)`` makes room in the lists first.
    static let startsReservedAtOnce = 1024

    mutating func start(_ job: RunPlan.Job, now: Date) {
        guard var record = jobs[job.id] else { return }
        record.attempts += 1
        record.state = .running
        record.reason = nil
        record.startedAt = now
        record.finishedAt = nil
        record.nextAttemptAt = nil
        record.waitingSince = nil
        record.exitCode = nil
        if record.firstStartedAt == nil { record.firstStartedAt = now }
        put(record)
        lanes.attemptStarted(job)
        let attempt = AttemptRecord(
            jobID: job.id, number: record.attempts, startedAt: now,
            logPath: logPath(job.id, attempt: record.attempts))
        attempts[job.id] = attempt
        decision.changes.append(.putAttempt(runID: run.id, attempt))
        emit(RunEvent(time: now, run: run.id, job: job.id, attempt: record.attempts, kind: .started))
        var needed: [String: [String: String]] = [:]
        for need in job.needs {
            if let values = outputs[need] { needed[need] = values }
        }
        decision.effects.append(
            .startAttempt(
                AttemptOrder(
                    runID: run.id, jobID: job.id, attempt: record.attempts,
                    logPath: writtenLogPath(job.id, attempt: record.attempts),
                    neededOutputs: needed)))
    }

    // MARK: Attempts

    mutating func attemptSpawned(_ jobID: String, attempt number: Int, pid: Int32, startTime: UInt64?) {
        guard var attempt = attempts[jobID], attempt.number == number else { return }
        attempt.pid = pid
        attempt.pidStartTime = startTime
        attempts[jobID] = attempt
        // The pid rides along with the next commit instead of costing one of its own: after a
        // crash the attempt is also found by its environment.
        unsavedAttempts.append(jobID)
    }

    /// Judges the failed attempts held for a connectivity probe, in file order: all of them, or
    /// only those the probe that answered was asked after (`askedOnly`).
    mutating func judgeHeldFailures(now: Date, askedOnly: Bool = false) {
        let held = heldFailures.filter { !askedOnly || $0.value.asked }
        for id in held.keys { heldFailures[id] = nil }
        for id in held.keys.sorted(by: { plan.order(of: $0) < plan.order(of: $1) }) {
            guard let (number, result, _) = held[id] else { continue }
            attemptEnded(id, attempt: number, result: result, now: now, probed: true)
        }
    }

    /// Asks a probe for the held failures that none asked so far covers, unless one runs.
    mutating func askProbeForHeldFailures() {
        guard !probeAsked, !heldFailures.isEmpty else { return }
        for id in heldFailures.keys { heldFailures[id]?.asked = true }
        probeAsked = true
        decision.effects.append(.probeConnectivity(runID: run.id))
    }

    /// Applies a finished attempt: its outcome, the job's next state, its dependents.
    /// - Parameter probed: the connectivity probe was asked after this attempt failed, so
    ///   `online` is fresh.
    mutating func attemptEnded(
        _ jobID: String, attempt number: Int, result: AttemptResult, now: Date, probed: Bool = false
    ) {
        guard var record = jobs[jobID], let job = plan.job(jobID), record.state == .running,
            record.attempts == number, probed || heldFailures[jobID] == nil
        else { return }
        let failed = [.failed, .timeout, .tempfail].contains(result.outcome)
        if failed && job.requiresInternet && online && !stopping && !probed {
            // The last probe may be up to an interval old: whether this failure counts is
            // decided on a fresh answer.
            heldFailures[jobID] = (number, result, false)
            askProbeForHeldFailures()
            return
        }
        lanes.attemptEnded(job)
        var attempt =
            attempts.removeValue(forKey: jobID)
            ?? AttemptRecord(
                jobID: jobID, number: number, startedAt: record.startedAt ?? now,
                logPath: logPath(jobID, attempt: number))
        attempt.outcome = result.outcome
        attempt.finishedAt = now
        attempt.exitCode = result.exitCode
        attempt.signal = result.signal
        attempt.reason = result.end.recordedReason
        attempt.logProblem = result.logProblem
        record.logProblem = result.logProblem
        record.exitCode = result.exitCode
        record.crashedInARow = 0
        if let reason = stopRequests.removeValue(forKey: jobID), result.outcome != .succeeded {
            attempt.outcome = .interrupted
            attempt.reason = reason.words
            decision.changes.append(.putAttempt(runID: run.id, attempt))
            jobs[jobID] = record
            finishEarly(job, reason: reason, now: now)
            return
        }
        decision.changes.append(.putAttempt(runID: run.id, attempt))

        if failed && !online && job.requiresInternet {
            // Failing while offline says nothing about the job: it waits for the internet again,
            // and the attempt does not count (SPEC 5.5).
            emit(
                RunEvent(
                    time: now, run: run.id, job: jobID, attempt: number, kind: .failed,
                    reason: result.end.words, exitCode: result.exitCode))
            record.uncountedAttempts += 1
            wait(&record, for: .internet, attempt: number, now: now)
            lanes.makeReady(job)
            return
        }

        switch result.outcome {
        case .succeeded, .skipped:
            if !result.outputs.isEmpty {
                outputs[jobID] = result.outputs
                decision.changes.append(
                    .putOutputs(runID: run.id, jobID: jobID, occurrence: "", result.outputs))
            }
            record.state = result.outcome == .succeeded ? .succeeded : .skipped
            record.reason = result.outcome == .skipped ? .ended(EndReason(result.end)) : nil
            record.finishedAt = now
            commitFinal(record, job: job)
            for key in result.outputs.keys.sorted() {
                emit(
                    RunEvent(
                        time: now, run: run.id, job: jobID, attempt: number, kind: .output, key: key,
                        value: result.outputs[key]))
            }
            emit(
                RunEvent(
                    time: now, run: run.id, job: jobID, attempt: number,
                    kind: result.outcome == .succeeded ? .succeeded : .skipped, reason: record.reason?.words))
            releaseDependents(of: jobID, now: now)
        case .interrupted:
            record.uncountedAttempts += 1
            record.state = .waiting
            record.reason = .waiting(.interrupted)
            put(record)
            emit(
                RunEvent(
                    time: now, run: run.id, job: jobID, attempt: number, kind: .interrupted,
                    reason: result.end.words))
            if !stopping { lanes.makeReady(job) }
        case .failed, .timeout, .tempfail:
            let reason = EndReason(result.end)
            emit(
                RunEvent(
                    time: now, run: run.id, job: jobID, attempt: number, kind: .failed, reason: reason.words,
                    exitCode: result.exitCode))
            // What `retry.on` judges: no code for a timeout; a temporary failure counts as exit
            // 75 even without a process (a plugin's retry), so it is retried like a shell job's.
            let judged: Int32? =
                switch result.outcome {
                case .timeout: nil
                case .tempfail: RetryPolicy.tempFailExitCode
                default: result.exitCode
                }
            failAttempt(
                record, job: job, judgedExitCode: judged, reason: reason, retryAfter: result.retryAfter,
                now: now)
        }
    }

    mutating func wait(_ record: inout JobRecord, for reason: WaitingReason, attempt: Int?, now: Date) {
        record.state = .waiting
        record.reason = .waiting(reason)
        record.waitingSince = now
        put(record)
        emit(
            RunEvent(
                time: now, run: run.id, job: record.jobID, attempt: attempt, kind: .waiting,
                reason: reason.words))
    }

    /// Decides whether a failed attempt gets another (``RetryPolicy/decide``); records and
    /// reports the decision.
    mutating func failAttempt(
        _ failed: JobRecord, job: RunPlan.Job, judgedExitCode: Int32?, reason: EndReason,
        retryAfter: Duration?,
        now: Date
    ) {
        var record = failed
        let decision = job.retry.decide(
            countedAttempts: record.countedAttempts, exitCode: judgedExitCode, retryAfter: retryAfter,
            firstStartedAt: record.firstStartedAt, now: now, random: &random)
        switch decision {
        case .retry(let delay):
            record.state = .waiting
            record.reason = .waiting(.backoff)
            record.nextAttemptAt = now.addingTimeInterval(delay.seconds)
            put(record)
            emit(
                RunEvent(
                    time: now, run: run.id, job: job.id, attempt: record.attempts, kind: .retrying,
                    delay: delay))
            if delay <= .zero {
                record.reason = nil
                record.nextAttemptAt = nil
                jobs[job.id] = record
                lanes.makeReady(job)
            } else {
                lanes.delay(job, until: now.addingTimeInterval(delay.seconds))
                emit(
                    RunEvent(
                        time: now, run: run.id, job: job.id, attempt: record.attempts, kind: .waiting,
                        reason: WaitingReason.backoff.words))
            }
        case .giveUp:
            record.state = .failed
            record.reason = .ended(reason)
            record.finishedAt = now
            commitFinal(record, job: job)
            settleDependents(of: record, now: now)
        }
    }

    mutating func commitFinal(_ record: JobRecord, job: RunPlan.Job) {
        let wasFinal = jobs[job.id]?.state.isFinal ?? false
        put(record)
        guard !wasFinal else { return }
        finalCount += 1
        lanes.closed(job)
    }

    /// A job ended as a failure: with `allowFailure` its dependents go on, else they are blocked.
    mutating func settleDependents(of record: JobRecord, now: Date) {
        if record.satisfiesNeeds {
            releaseDependents(of: record.jobID, now: now)
        } else {
            blockDependents(of: record.jobID, now: now)
        }
    }

    /// A job ended in a way that lets its dependents go on: each waits for one need less.
    mutating func releaseDependents(of id: String, now: Date) {
        for dependent in plan.dependents(of: id) { releaseNeed(of: dependent, now: now) }
    }

    mutating func releaseNeed(of dependent: String, now: Date) {
        unmetNeeds[dependent] -= 1
        if unmetNeeds[dependent] == 0, let job = plan.job(dependent) { makeReadyIfDue(job, now: now) }
    }

    /// The first of a job's needs whose end blocks it: a need that failed, was blocked or was
    /// cancelled, unless the job runs `when: failure` or `always`.
    func blockingNeed(of job: RunPlan.Job) -> String? {
        plan.position(of: job.id).flatMap { blockingNeed(at: $0) }
    }

    /// ``blockingNeed(of:)`` of the job at `position` in the plan.
    func blockingNeed(at position: Int) -> String? {
        guard !plan.jobs[position].when.waitsForFinalNeeds else { return nil }
        return plan.needPositions(of: position).first { $0 >= 0 && jobs.endedBadly(at: Int($0)) }.map {
            plan.jobs[Int($0)].id
        }
    }

    mutating func blockDependents(of id: String, now: Date) {
        block((plan.dependents(of: id)).map { ($0, id) }, now: now)
    }

    /// Blocks each job because its need ended badly, and everything that waits on it.
    mutating func block(_ start: [(job: String, need: String)], now: Date) {
        // Iterative: a failure at the head of a long chain blocks thousands of jobs.
        var pending = start
        while let (id, need) = pending.popLast() {
            guard var record = jobs[id], !record.state.isFinal, record.state != .running,
                let job = plan.job(id)
            else { continue }
            if job.when.waitsForFinalNeeds {
                // `when: failure` or `always`: a need that ended badly is one need less to wait for.
                releaseNeed(of: id, now: now)
                continue
            }
            record.state = .blocked
            record.reason = .ended(.blockedBy(need))
            record.finishedAt = now
            commitFinal(record, job: job)
            emit(RunEvent(time: now, run: run.id, job: id, kind: .blocked, reason: record.reason?.words))
            pending.append(contentsOf: (plan.dependents(of: id)).map { ($0, id) })
        }
    }
}
