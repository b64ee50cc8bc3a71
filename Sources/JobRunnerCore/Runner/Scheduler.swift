import Foundation

/// The runner's decisions as a state machine: it is told what happened (``SchedulerInput``)
/// and answers with the changes to store and the effects to perform once they are durable
/// (``Decision``). It does no I/O, reads no clock and draws no random number of its own, so a
/// test drives it input by input and reads its decisions.
///
/// It owns the run's records: jobs, the attempts that run, outputs, the run itself. The
/// ``Runner`` performs its effects and feeds their results back; crash recovery and the
/// operator commands that act with no runner use the same inputs.
public struct Scheduler {
    /// How many runner deaths in a row during the attempts of a job that runs inside the runner
    /// (an in-process plugin) make the job `failed` with reason `crashed the runner` instead of
    /// starting it again (SPEC 5.9).
    public static let crashLoopLimit = 3

    /// The folder of a run's log directory that keeps constraints' `satisfy` output, one file
    /// per constraint: `<logs>/<run>/.constraints/<name>.log`.
    public static let constraintLogFolder = ".constraints"

    /// How often a run that only suspended pipelines hold back says so again.
    public static let stallNoticeInterval: TimeInterval = 30

    private let plan: RunPlan
    private let options: SchedulerOptions
    /// The run as stored.
    public private(set) var run: RunRecord
    private var jobs: JobTable
    /// The attempt record of each running job, from its start to its end.
    private var attempts: [String: AttemptRecord] = [:]
    /// Running attempts whose pid is not stored yet: it rides with the next commit.
    private var unsavedAttempts: [String] = []
    private var outputs: [String: [String: String]]
    private var lanes: PipelineLanes
    private var gate = ConstraintGate()
    /// Per job: needs not yet succeeded or skipped.
    private var unmetNeeds: NeedCounts
    private var finalCount = 0
    private var online = true
    private var stopping = false
    /// Failed attempts of jobs that need the internet, held until a probe asked after they
    /// ended answers: offline, they do not count (SPEC 5.5). Their jobs keep their slot
    /// meanwhile. `asked`: the probe being asked started after this failure; one held while it
    /// runs waits for the next.
    private var heldFailures: [String: (attempt: Int, result: AttemptResult, asked: Bool)] = [:]
    /// A probe asked for held failures has not answered yet.
    private var probeAsked = false
    /// Running jobs an operator asked to cancel or skip: their attempt is being ended.
    private var stopRequests: [String: OperatorRequest.Kind] = [:]
    private var handledRequests = Set<UInt64>()
    private var random: AnyRandomSource
    /// What the input being handled decided so far.
    private var decision = Decision()
    /// While the run cannot go on because of suspended pipelines: when it says so again.
    private var stallNoticeDue: Date?

    /// A scheduler for stored records. Running jobs keep their attempt running until it ends
    /// (or `runnerDied` says it never will).
    /// - Parameters:
    ///   - attempts: the runs' attempts by job id; the last one without an outcome of each
    ///     running job is its running attempt.
    ///   - suspended: the pipelines' persisted suspend counts.
    ///   - random: jitter's source.
    public init(
        plan: RunPlan, run: RunRecord, jobs: [String: JobRecord], attempts: [String: [AttemptRecord]] = [:],
        outputs: [String: [String: String]] = [:], suspended: [String: Int] = [:], options: SchedulerOptions,
        random: any RandomSource, now: Date
    ) {
        self.init(
            plan: plan, run: run, jobs: JobTable(plan: plan, records: jobs), attempts: attempts,
            outputs: outputs,
            suspended: suspended, options: options, random: random, now: now)
    }

    init(
        plan: RunPlan, run: RunRecord, jobs: consuming JobTable, attempts: [String: [AttemptRecord]] = [:],
        outputs: [String: [String: String]] = [:], suspended: [String: Int] = [:], options: SchedulerOptions,
        random: any RandomSource, now: Date
    ) {
        self.plan = plan
        self.options = options
        self.run = run
        // Consumed: a copy kept here would make the first write to a record copy the table.
        self.jobs = jobs
        self.unmetNeeds = NeedCounts(plan: plan)
        self.outputs = outputs
        self.random = AnyRandomSource(random)
        self.lanes = PipelineLanes(plan: plan, maxRunning: options.maxRunning, suspended: suspended)
        // Definitions are read afresh on resume (SPEC 5.9); keep the stored copies in step.
        self.jobs.takeDefinitions()
        // By position, and by state where that is enough: making each of 100,000 records
        // again from its summary (and finding it by id) cost most of a resumed run's opening.
        for position in plan.jobs.indices {
            guard let state = self.jobs.state(at: position) else { continue }
            if state.isFinal {
                finalCount += 1
                continue
            }
            let job = plan.jobs[position]
            lanes.opened(job)
            var unmet = 0
            for need in plan.needPositions(of: position) {
                let met =
                    need < 0
                    ? nil
                    : job.when.waitsForFinalNeeds
                        ? self.jobs.state(at: Int(need))?.isFinal : self.jobs.satisfiesNeeds(at: Int(need))
                if met != true { unmet += 1 }
            }
            unmetNeeds[position: position] = unmet
            if state == .running, let record = self.jobs[position: position] {
                lanes.attemptStarted(job)
                self.attempts[job.id] =
                    attempts[job.id]?.last { $0.outcome == nil && $0.number == record.attempts }
                    ?? AttemptRecord(
                        jobID: job.id, number: record.attempts, startedAt: record.startedAt ?? now,
                        logPath: logPath(job.id, attempt: record.attempts))
            }
        }
        for position in plan.jobs.indices {
            guard let state = self.jobs.state(at: position), !state.isFinal else { continue }
            // A need that ended badly while no runner was there to block this job.
            if let failedNeed = blockingNeed(at: position) {
                block([(plan.jobs[position].id, failedNeed)], now: now)
                continue
            }
            // What `makeReadyIfDue` looks at first, without finding the job by id.
            if unmetNeeds[position: position] == 0 { makeReadyIfDue(plan.jobs[position], now: now) }
        }
    }

    // MARK: What it is asked

    /// Whether every job of the run is final.
    public var isFinished: Bool { finalCount == plan.jobs.count }

    /// Whether nothing runs: no attempt, no constraint check or `satisfy`.
    public var isIdle: Bool { lanes.runningCount == 0 && !gate.isBusy }

    /// How many attempts run.
    public var runningCount: Int { lanes.runningCount }

    /// When the next held-back job becomes due: the runner sends a `tick` then.
    public var nextWakeDate: Date? {
        stopping ? nil : [lanes.nextDueDate, stallNoticeDue].compactMap { $0 }.min()
    }

    /// A job's record.
    public func record(_ id: String) -> JobRecord? { jobs[id] }

    /// The outputs a job of the run gave, if it gave any.
    public func outputs(of id: String) -> [String: String]? { outputs[id] }

    /// The pipeline slots the run's attempts hold.
    public var slotsTaken: SlotsTaken { lanes.taken }

    /// The slots its ready jobs wait for: pipelines found full, `nil` for the `--jobs` cap.
    public var slotsWanted: Set<String?> { stopping ? [] : lanes.wanted }

    /// The pipelines' suspend counts as last told.
    public var suspensions: [String: Int] { lanes.suspended }

    /// The running attempt of a job.
    public func runningAttempt(_ id: String) -> AttemptRecord? { attempts[id] }

    /// The jobs that ended badly, in load order: failed (also with `allowFailure`), blocked or
    /// cancelled; what a run's closing summary names.
    public var troubledJobs: [JobRecord] {
        // Filtered as they are looked up: a run of 100,000 jobs must not copy every record.
        plan.jobs.compactMap { job in
            jobs[job.id].flatMap { [.failed, .blocked, .cancelled].contains($0.state) ? $0 : nil }
        }
    }

    /// How many jobs are in each state.
    public var counts: [JobState: Int] {
        var counts: [JobState: Int] = [:]
        for record in jobs.values { counts[record.state, default: 0] += 1 }
        return counts
    }

    // MARK: Inputs

    /// Takes one input; returns what it decided.
    public mutating func handle(_ input: SchedulerInput, now: Date) -> Decision {
        handle([input], now: now)
    }

    /// Takes several inputs that arrived together, then starts what may start; returns what
    /// they decided, in order.
    public mutating func handle(_ inputs: [SchedulerInput], now: Date) -> Decision {
        for input in inputs { take(input, now: now) }
        if !stopping {
            lanes.releaseDue(now: now)
            startReadyJobs(now: now)
            noticeStall(now: now)
        }
        return takeDecision()
    }

    /// Says which of the run's pipelines an operator had suspended before it opened, so that a
    /// later `resumed` follows a `suspended` in the run's events.
    mutating func announceSuspensions(now: Date) {
        let used = Set(plan.jobs.map(\.pipeline))
        for name in lanes.suspended.keys.sorted() where lanes.isSuspended(name) && used.contains(name) {
            emit(RunEvent(time: now, run: run.id, kind: .suspended, pipeline: name))
        }
    }

    /// A run that nothing but suspended pipelines holds back (nothing runs, nothing is due
    /// later) says so at once and every ``stallNoticeInterval``: a `waiting` event for the
    /// pipeline with reason `suspended`.
    private mutating func noticeStall(now: Date) {
        let stalled =
            isIdle && !isFinished && lanes.nextDueDate == nil
            ? Set(lanes.readyJobs.compactMap { plan.job($0)?.pipeline }.filter { lanes.isSuspended($0) })
            : []
        guard !stalled.isEmpty else {
            stallNoticeDue = nil
            return
        }
        if let due = stallNoticeDue, now < due { return }
        for name in stalled.sorted() {
            emit(
                RunEvent(
                    time: now, run: run.id, kind: .waiting, reason: WaitingReason.suspended.words,
                    pipeline: name))
        }
        stallNoticeDue = now.addingTimeInterval(Self.stallNoticeInterval)
    }

    private mutating func take(_ input: SchedulerInput, now: Date) {
        switch input {
        case .attemptSpawned(let jobID, let attempt, let pid, let startTime):
            attemptSpawned(jobID, attempt: attempt, pid: pid, startTime: startTime)
        case .attemptEnded(let jobID, let attempt, let result):
            attemptEnded(jobID, attempt: attempt, result: result, now: now)
        case .operatorRequests(let requests, let stored):
            for request in requests {
                if handledRequests.insert(request.id).inserted {
                    let result = apply(request, now: now)
                    decision.answers.append(OperatorAnswer(request: request, result: result))
                }
                if stored { decision.changes.append(.deleteRequest(runID: run.id, id: request.id)) }
            }
            reopenRunIfNeeded(now: now)
        case .suspensions(let counts):
            let changed = lanes.setSuspensions(counts)
            for name in changed.suspended {
                emit(RunEvent(time: now, run: run.id, kind: .suspended, pipeline: name))
            }
            for name in changed.resumed {
                emit(RunEvent(time: now, run: run.id, kind: .resumed, pipeline: name))
            }
        case .tick:
            break
        case .slotsElsewhere(let taken):
            lanes.elsewhere = taken
        case .connectivity(let value):
            setOnline(value, now: now)
        case .probed(let value):
            setOnline(value, now: now)
            probeAsked = false
            judgeHeldFailures(now: now, askedOnly: true)
            askProbeForHeldFailures()
        case .constraintsChecked(let jobID, let failed):
            constraintsChecked(jobID, failed: failed, now: now)
        case .satisfyEnded(let name, let outcome):
            satisfyEnded(name, outcome: outcome, now: now)
        case .runnerDied:
            runnerDied(now: now)
        case .stop:
            stopping = true
            // No probe answer is awaited on the way out: judge them on what is known.
            judgeHeldFailures(now: now)
        }
    }

    /// The run's final record once every job is final (or `stopped` after a clean stop), and
    /// its `run-finished` event.
    public mutating func close(now: Date) -> Decision {
        if isFinished {
            run.state = verdict
            run.finishedAt = now
        } else {
            run.state = .stopped
        }
        decision.changes.append(.putRun(run))
        emit(RunEvent(time: now, run: run.id, kind: .runFinished, state: run.state.rawValue))
        return takeDecision()
    }

    private mutating func takeDecision() -> Decision {
        if !unsavedAttempts.isEmpty && !decision.changes.isEmpty {
            let saved = unsavedAttempts.compactMap { attempts[$0] }.map {
                StoreChange.putAttempt(runID: run.id, $0)
            }
            decision.changes.insert(contentsOf: saved, at: 0)
            unsavedAttempts.removeAll()
        }
        defer { decision = Decision() }
        return decision
    }

    private mutating func emit(_ event: RunEvent) { decision.effects.append(.emit(event)) }

    private mutating func put(_ record: JobRecord) {
        jobs[record.jobID] = record
        decision.changes.append(.putJob(runID: run.id, record))
    }

    /// Where an attempt's log is, as stored: under ``SchedulerOptions/storedLogDirectory``.
    private func logPath(_ jobID: String, attempt: Int) -> String {
        LogLayout.attemptLog(in: options.storedLogDirectory, runID: run.id, jobID: jobID, attempt: attempt)
    }

    /// Where an attempt's handler writes its log.
    private func writtenLogPath(_ jobID: String, attempt: Int) -> String {
        LogLayout.attemptLog(in: options.logDirectory, runID: run.id, jobID: jobID, attempt: attempt)
    }

    /// Where the output of a constraint's last `satisfy` in this run is kept, as stored.
    private func satisfyLogPath(_ constraint: String) -> String {
        "\(options.storedLogDirectory)/\(run.id)/\(Self.constraintLogFolder)/\(constraint).log"
    }

    // MARK: Readiness and starts

    private mutating func makeReadyIfDue(_ job: RunPlan.Job, now: Date) {
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
    private mutating func markInternetWaiters(now: Date) {
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

    private mutating func setOnline(_ value: Bool, now: Date) {
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
    private mutating func startReadyJobs(now: Date) {
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

    private mutating func start(_ job: RunPlan.Job, now: Date) {
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

    private mutating func attemptSpawned(_ jobID: String, attempt number: Int, pid: Int32, startTime: UInt64?)
    {
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
    private mutating func judgeHeldFailures(now: Date, askedOnly: Bool = false) {
        let held = heldFailures.filter { !askedOnly || $0.value.asked }
        for id in held.keys { heldFailures[id] = nil }
        for id in held.keys.sorted(by: { plan.order(of: $0) < plan.order(of: $1) }) {
            guard let (number, result, _) = held[id] else { continue }
            attemptEnded(id, attempt: number, result: result, now: now, probed: true)
        }
    }

    /// Asks a probe for the held failures that none asked so far covers, unless one runs.
    private mutating func askProbeForHeldFailures() {
        guard !probeAsked, !heldFailures.isEmpty else { return }
        for id in heldFailures.keys { heldFailures[id]?.asked = true }
        probeAsked = true
        decision.effects.append(.probeConnectivity(runID: run.id))
    }

    /// Applies a finished attempt: its outcome, the job's next state, its dependents.
    /// - Parameter probed: the connectivity probe was asked after this attempt failed, so
    ///   `online` is fresh.
    private mutating func attemptEnded(
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
        attempt.reason = result.reason
        record.exitCode = result.exitCode
        record.crashedInARow = 0
        if let kind = stopRequests.removeValue(forKey: jobID), result.outcome != .succeeded {
            attempt.outcome = .interrupted
            attempt.reason = EndReason.byOperator(kind).words
            decision.changes.append(.putAttempt(runID: run.id, attempt))
            jobs[jobID] = record
            finishByOperator(job, kind: kind, now: now)
            return
        }
        decision.changes.append(.putAttempt(runID: run.id, attempt))

        if failed && !online && job.requiresInternet {
            // Failing while offline says nothing about the job: it waits for the internet again,
            // and the attempt does not count (SPEC 5.5).
            emit(
                RunEvent(
                    time: now, run: run.id, job: jobID, attempt: number, kind: .failed,
                    reason: EndReason(result).words, exitCode: result.exitCode))
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
            record.reason = result.outcome == .skipped ? .ended(EndReason(result)) : nil
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
                    reason: result.reason))
            if !stopping { lanes.makeReady(job) }
        case .failed, .timeout, .tempfail:
            let reason = EndReason(result)
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

    private mutating func wait(_ record: inout JobRecord, for reason: WaitingReason, attempt: Int?, now: Date)
    {
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
    private mutating func failAttempt(
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

    private mutating func commitFinal(_ record: JobRecord, job: RunPlan.Job) {
        let wasFinal = jobs[job.id]?.state.isFinal ?? false
        put(record)
        guard !wasFinal else { return }
        finalCount += 1
        lanes.closed(job)
    }

    /// A job ended as a failure: with `allowFailure` its dependents go on, else they are blocked.
    private mutating func settleDependents(of record: JobRecord, now: Date) {
        if record.satisfiesNeeds {
            releaseDependents(of: record.jobID, now: now)
        } else {
            blockDependents(of: record.jobID, now: now)
        }
    }

    /// A job ended in a way that lets its dependents go on: each waits for one need less.
    private mutating func releaseDependents(of id: String, now: Date) {
        for dependent in plan.dependents(of: id) { releaseNeed(of: dependent, now: now) }
    }

    private mutating func releaseNeed(of dependent: String, now: Date) {
        unmetNeeds[dependent] -= 1
        if unmetNeeds[dependent] == 0, let job = plan.job(dependent) { makeReadyIfDue(job, now: now) }
    }

    /// The first of a job's needs whose end blocks it: a need that failed, was blocked or was
    /// cancelled, unless the job runs `when: failure` or `always`.
    private func blockingNeed(of job: RunPlan.Job) -> String? {
        plan.position(of: job.id).flatMap { blockingNeed(at: $0) }
    }

    /// ``blockingNeed(of:)`` of the job at `position` in the plan.
    private func blockingNeed(at position: Int) -> String? {
        guard !plan.jobs[position].when.waitsForFinalNeeds else { return nil }
        return plan.needPositions(of: position).first { $0 >= 0 && jobs.endedBadly(at: Int($0)) }.map {
            plan.jobs[Int($0)].id
        }
    }

    private mutating func blockDependents(of id: String, now: Date) {
        block((plan.dependents(of: id)).map { ($0, id) }, now: now)
    }

    /// Blocks each job because its need ended badly, and everything that waits on it.
    private mutating func block(_ start: [(job: String, need: String)], now: Date) {
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

    // MARK: Recovery

    /// The runner that worked on the run died: each running attempt is recorded `interrupted`
    /// and its job starts again without using up an attempt (SPEC 5.9), unless the job runs
    /// code inside the runner and runners died during its attempts ``crashLoopLimit`` times in
    /// a row.
    private mutating func runnerDied(now: Date) {
        // Only jobs with a running attempt can have one to end: found from the attempts, in
        // load order, not by looking at every job's record.
        let running = attempts.keys.compactMap { plan.position(of: $0) }.sorted()
            .filter { jobs.state(at: $0) == .running }.map { plan.jobs[$0] }
        for job in running {
            guard var record = jobs[job.id], var attempt = attempts.removeValue(forKey: job.id) else {
                continue
            }
            lanes.attemptEnded(job)
            let reason = "the runner died while it ran"
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
    private mutating func apply(_ request: OperatorRequest, now: Date) -> OperatorResult {
        let id = request.jobID
        guard let record = jobs[id], let job = plan.job(id) else {
            return .refused("run \(run.id) has no job '\(id)'")
        }
        switch (request.kind, record.state) {
        case (.cancel, .running), (.skip, .running):
            stopRequests[id] = request.kind
            let attempt = attempts[id]
            decision.effects.append(
                .endAttempt(
                    runID: run.id, jobID: id, attempt: record.attempts, pid: attempt?.pid,
                    pidStartTime: attempt?.pidStartTime))
            return .terminating(jobID: id)
        case (.cancel, .pending), (.cancel, .waiting), (.skip, .pending), (.skip, .waiting):
            finishByOperator(job, kind: request.kind, now: now)
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
                    "\(id) is blocked by \(need), which is \(jobs[need]?.state.rawValue ?? "unknown"); retry \(need) instead"
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
                "\(id) is \(record.state.rawValue); only a failed, blocked or cancelled job can be retried")
        case (.skip, _), (.cancel, _):
            return .refused("\(id) is already \(record.state.rawValue)")
        }
    }

    /// Ends a job that is not (or no longer) running as the operator asked.
    private mutating func finishByOperator(_ job: RunPlan.Job, kind: OperatorRequest.Kind, now: Date) {
        guard var record = jobs[job.id] else { return }
        record.state = kind == .cancel ? .cancelled : .skipped
        record.reason = .ended(.byOperator(kind))
        record.finishedAt = now
        record.nextAttemptAt = nil
        commitFinal(record, job: job)
        emit(
            RunEvent(
                time: now, run: run.id, job: job.id, kind: kind == .cancel ? .cancelled : .skipped,
                reason: record.reason?.words))
        if kind == .cancel {
            blockDependents(of: job.id, now: now)
        } else {
            releaseDependents(of: job.id, now: now)
        }
    }

    /// Reopens the jobs that were blocked, directly or through others, because of `id`.
    private mutating func reopen(blockedBehind id: String, now: Date) {
        var found: [String] = []
        var pending = Array(plan.dependents(of: id))
        var seen = Set<String>()
        while let job = pending.popLast() {
            guard seen.insert(job).inserted, jobs[job]?.state == .blocked else { continue }
            found.append(job)
            pending.append(contentsOf: plan.dependents(of: job))
        }
        reopen(found, now: now)
    }

    /// Makes final jobs pending again with a fresh retry budget, then lets each become ready,
    /// or blocked again if another of its needs still stands in the way.
    private mutating func reopen(_ ids: [String], now: Date) {
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
    private mutating func reopenRunIfNeeded(now: Date) {
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
    private var verdict: RunState { jobs.values.contains(where: \.failsRun) ? .failed : .succeeded }

    // MARK: Constraints

    private mutating func constraintsChecked(_ jobID: String, failed: String?, now: Date) {
        guard gate.checked(jobID), var record = jobs[jobID], !record.state.isFinal, let job = plan.job(jobID)
        else {
            return
        }
        guard let name = failed else {
            gate.clear(jobID)
            lanes.makeReady(job)
            return
        }
        wait(&record, for: .constraint(name), attempt: nil, now: now)
        // A stop starts nothing: the next runner checks again and satisfies then.
        if !stopping && gate.wait(jobID, for: name) {
            decision.effects.append(.satisfy(runID: run.id, constraint: name))
        }
    }

    /// On success the jobs waiting on the constraint go on; on failure each one's attempt fails
    /// with the last line of satisfy's output, and the retry policy decides (SPEC 5.6). A
    /// `satisfy` that ends without success after a stop was most likely ended by it: no failure
    /// then, the jobs keep waiting without using an attempt (SPEC 5.4), and the next runner
    /// satisfies again.
    private mutating func satisfyEnded(_ name: String, outcome: SatisfyOutcome, now: Date) {
        for jobID in gate.satisfyEnded(name) {
            guard var record = jobs[jobID], !record.state.isFinal, record.waitingReason == .constraint(name),
                let job = plan.job(jobID), !stopping || outcome == .satisfied
            else { continue }
            switch outcome {
            case .satisfied:
                gate.clear(jobID)
                lanes.makeReady(job)
            case .failed(let lastLine):
                let reason = EndReason.constraintFailed(constraint: name, lastLine: lastLine)
                record.attempts += 1
                if record.firstStartedAt == nil { record.firstStartedAt = now }
                record.waitingSince = nil
                decision.changes.append(
                    .putAttempt(
                        runID: run.id,
                        AttemptRecord(
                            jobID: jobID, number: record.attempts, outcome: .failed, startedAt: now,
                            finishedAt: now,
                            reason: reason.words, logPath: satisfyLogPath(name))))
                emit(
                    RunEvent(
                        time: now, run: run.id, job: jobID, attempt: record.attempts, kind: .failed,
                        reason: reason.words))
                failAttempt(record, job: job, judgedExitCode: nil, reason: reason, retryAfter: nil, now: now)
            }
        }
    }
}

extension EndReason {
    /// How an operator's `cancel` or `skip` ended a job.
    static func byOperator(_ kind: OperatorRequest.Kind) -> EndReason {
        kind == .cancel ? .cancelledByOperator : .skippedByOperator
    }
}
