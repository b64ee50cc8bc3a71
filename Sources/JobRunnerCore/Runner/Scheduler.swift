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

    let plan: RunPlan
    let options: SchedulerOptions
    /// The run as stored.
    public internal(set) var run: RunRecord
    var jobs: JobTable
    /// The attempt record of each running job, from its start to its end.
    var attempts: [String: AttemptRecord] = [:]
    /// Running attempts whose pid is not stored yet: it rides with the next commit.
    var unsavedAttempts: [String] = []
    var outputs: [String: [String: String]]
    var lanes: PipelineLanes
    var gate = ConstraintGate()
    /// Per job: needs not yet succeeded or skipped.
    var unmetNeeds: NeedCounts
    var finalCount = 0
    var online = true
    var stopping = false
    /// Failed attempts of jobs that need the internet, held until a probe asked after they
    /// ended answers: offline, they do not count (SPEC 5.5). Their jobs keep their slot
    /// meanwhile. `asked`: the probe being asked started after this failure; one held while it
    /// runs waits for the next.
    var heldFailures: [String: (attempt: Int, result: AttemptResult, asked: Bool)] = [:]
    /// A probe asked for held failures has not answered yet.
    var probeAsked = false
    /// Running jobs an operator asked to cancel or skip: their attempt is being ended.
    /// Running jobs being ended early, by an operator or a replacing occurrence: how each
    /// ends once its attempt has.
    var stopRequests: [String: EndReason] = [:]
    var handledRequests = Set<UInt64>()
    var random: AnyRandomSource
    /// What the input being handled decided so far.
    var decision = Decision()
    /// While the run cannot go on because of suspended pipelines: when it says so again.
    var stallNoticeDue: Date?

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
    mutating func noticeStall(now: Date) {
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

    mutating func take(_ input: SchedulerInput, now: Date) {
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
        case .replaced(let jobID):
            endEarly(jobID, reason: .replacedByNextOccurrence, now: now)
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

    mutating func takeDecision() -> Decision {
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

    mutating func emit(_ event: RunEvent) {
        guard let date = run.scheduledAt else { return decision.effects.append(.emit(event)) }
        // An occurrence's events name it (SPEC 5.12).
        var named = event
        named.occurrence = date
        decision.effects.append(.emit(named))
    }

    mutating func put(_ record: JobRecord) {
        jobs[record.jobID] = record
        decision.changes.append(.putJob(runID: run.id, record))
    }

    /// Where an attempt's log is, as stored: under ``SchedulerOptions/storedLogDirectory``.
    func logPath(_ jobID: String, attempt: Int) -> String {
        LogLayout.attemptLog(in: options.storedLogDirectory, runID: run.id, jobID: jobID, attempt: attempt)
    }

    /// Where an attempt's handler writes its log.
    func writtenLogPath(_ jobID: String, attempt: Int) -> String {
        LogLayout.attemptLog(in: options.logDirectory, runID: run.id, jobID: jobID, attempt: attempt)
    }

    /// Where the output of a constraint's last `satisfy` in this run is kept, as stored.
    func satisfyLogPath(_ constraint: String) -> String {
        "\(options.storedLogDirectory)/\(run.id)/\(Self.constraintLogFolder)/\(constraint).log"
    }
}
