import Foundation

/// Something the runner does once a batch of changes is durable.
enum Effect: Sendable {
    case emit(RunEvent)
    case start(jobID: String, attempt: Int)
    /// Run the `check` of each of the job's constraints.
    case check(jobID: String)
    /// Run a constraint's `satisfy`.
    case satisfy(constraint: String)
}

/// The runner's decisions, as pure state: which jobs are ready, which start next, what a
/// finished attempt means for the job and its dependents. Every decision appends the
/// changes to store and the effects to perform once they are durable; nothing here does I/O,
/// so every rule is testable without a clock or a process.
struct Scheduler {
    let workload: Workload
    let runID: String
    let maxRunning: Int?
    let logDirectory: String

    var jobs: [String: JobRecord]
    private(set) var outputs: [String: [String: String]]
    var suspended: [String: Int]
    private(set) var runningPerPipeline: [String: Int] = [:]
    private(set) var runningTotal = 0
    var finalCount = 0

    /// Per job: needs not yet succeeded or skipped.
    var unmetNeeds: [String: Int] = [:]
    /// Per pipeline: ready job ids, best first (priority, then load order).
    var ready: [String: ReadyQueue] = [:]
    /// Jobs waiting for a backoff delay, with their due date.
    var delayed: [String: Date] = [:]
    /// Per sequential pipeline: count of non-final jobs by file index.
    var openByFile: [String: [Int: Int]] = [:]
    let dependents: [String: [String]]

    /// What the connectivity probe last said (SPEC 5.5).
    var online = true

    /// Jobs whose constraints are being checked (no attempt, no slot).
    var checking = Set<String>()
    /// Jobs whose constraints held (or were just satisfied): their next start skips the check.
    var cleared = Set<String>()
    /// Jobs waiting for each constraint's `satisfy`, and the constraints whose `satisfy` runs.
    var waitingOnConstraint: [String: [String]] = [:]
    var satisfying = Set<String>()

    /// Running jobs an operator asked to cancel or skip: their attempt is being terminated.
    var stopRequests: [String: OperatorRequest.Kind] = [:]

    /// Changes and effects decided since the last `takeBatch()`.
    private(set) var changes: [StoreChange] = []
    var effects: [Effect] = []

    init(
        workload: Workload, runID: String, jobs: [String: JobRecord], outputs: [String: [String: String]],
        suspended: [String: Int], maxRunning: Int?, logDirectory: String, now: Date
    ) {
        self.workload = workload
        self.runID = runID
        self.jobs = jobs
        self.outputs = outputs
        self.suspended = suspended
        self.maxRunning = maxRunning
        self.logDirectory = logDirectory
        self.dependents = workload.dependents()
        for job in workload.jobs {
            guard let record = jobs[job.id] else { continue }
            if record.state.isFinal {
                finalCount += 1
                continue
            }
            if workload.pipelines[job.pipeline]?.order == .sequential {
                openByFile[job.pipeline, default: [:]][job.fileIndex, default: 0] += 1
            }
            unmetNeeds[job.id] = job.needs.filter { jobs[$0]?.state.satisfiesNeeds != true }.count
        }
        for job in workload.jobs {
            guard let record = jobs[job.id], !record.state.isFinal else { continue }
            if job.needs.contains(where: { need in
                guard let state = jobs[need]?.state else { return false }
                return state.isFinal && !state.satisfiesNeeds
            }) {
                // A need ended badly while no runner was there to block this job.
                let failedNeed = job.needs.first { need in
                    jobs[need].map { $0.state.isFinal && !$0.state.satisfiesNeeds } ?? false
                }
                block(job.id, because: failedNeed ?? "", now: now)
                continue
            }
            makeReadyIfDue(job.id)
        }
    }

    var isFinished: Bool { finalCount == workload.jobs.count }

    /// The earliest date a delayed job becomes due.
    var nextWakeDate: Date? { delayed.values.min() }

    mutating func takeBatch() -> (changes: [StoreChange], effects: [Effect]) {
        defer {
            changes = []
            effects = []
        }
        return (changes, effects)
    }

    mutating func append(_ change: StoreChange) { changes.append(change) }
    mutating func emit(_ event: RunEvent) { effects.append(.emit(event)) }

    // MARK: Readiness

    mutating func makeReadyIfDue(_ id: String) {
        guard let record = jobs[id], !record.state.isFinal, record.state != .running,
            unmetNeeds[id, default: 0] == 0, let job = workload.job(id)
        else { return }
        if let due = record.nextAttemptAt, delayed[id] == nil, record.state == .waiting,
            record.reason == "backoff"
        {
            delayed[id] = due
            return
        }
        guard delayed[id] == nil else { return }
        insertReady(job)
    }

    mutating func insertReady(_ job: JobDefinition) {
        let sequential = workload.pipelines[job.pipeline]?.order == .sequential
        ready[job.pipeline, default: ReadyQueue()].insert(
            job.id, priority: job.priority, order: workload.order(of: job.id) ?? 0,
            file: sequential ? job.fileIndex : 0)
    }

    /// Moves delayed jobs whose date has come to the ready queues.
    mutating func releaseDelayed(now: Date) {
        for (id, due) in delayed where due <= now {
            delayed[id] = nil
            if let job = workload.job(id) { insertReady(job) }
        }
    }

    private func pipelineHasSlot(_ name: String) -> Bool {
        let limit = workload.pipelines[name]?.maxConcurrent ?? PipelineDefinition.defaultMaxConcurrent
        return limit == 0 || runningPerPipeline[name, default: 0] < limit
    }

    /// The best ready job of pipeline `name` that may start now, left in its queue.
    private mutating func startableJob(in name: String) -> String? {
        guard ready[name]?.isEmpty == false else { return nil }
        if !online && workload.pipelines[name]?.requiresInternet == true { return nil }
        var currentFile: Int?
        if workload.pipelines[name]?.order == .sequential, let openFiles = openByFile[name] {
            currentFile = openFiles.filter({ $0.value > 0 }).keys.min()
        }
        if online {
            // Sequential queues put earlier files first: the best job is of the open file or none is.
            guard let id = ready[name]?.first() else { return nil }
            if let currentFile, workload.job(id)?.fileIndex != currentFile { return nil }
            return id
        }
        let workload = self.workload
        return ready[name]?.first { id in
            guard let job = workload.job(id) else { return false }
            if let currentFile, job.fileIndex != currentFile { return false }
            return !workload.requiresInternet(job)
        }
    }

    /// While offline, records each ready job that needs the internet as waiting for it.
    private mutating func markInternetWaiters(now: Date) {
        for (_, queue) in ready {
            let newlyWaiting = queue.ids.filter { id in
                guard let job = workload.job(id) else { return false }
                return jobs[id]?.reason != "internet" && workload.requiresInternet(job)
            }
            for id in newlyWaiting.sorted(by: {
                (workload.order(of: $0) ?? 0) < (workload.order(of: $1) ?? 0)
            }) {
                guard var record = jobs[id] else { continue }
                record.state = .waiting
                record.reason = "internet"
                record.waitingSince = now
                jobs[id] = record
                changes.append(.putJob(runID: runID, record))
                emit(RunEvent(time: now, run: runID, job: id, kind: .waiting, reason: "internet"))
            }
        }
    }

    /// Takes the probe's answer; pipelines that need the internet are reported suspended or
    /// resumed when it changes.
    mutating func setOnline(_ value: Bool, now: Date) {
        guard value != online else { return }
        online = value
        for name in workload.pipelines.keys.sorted() where workload.pipelines[name]?.requiresInternet == true
        {
            emit(
                RunEvent(
                    time: now, run: runID, kind: value ? .resumed : .suspended, reason: "internet",
                    pipeline: name))
        }
    }

    /// Starts every ready job that a slot allows, best first.
    mutating func startReadyJobs(now: Date) {
        if !online { markInternetWaiters(now: now) }
        while maxRunning.map({ runningTotal < $0 }) ?? true {
            var best: (pipeline: String, job: JobDefinition)?
            for name in ready.keys.sorted() {
                guard suspended[name, default: 0] == 0, pipelineHasSlot(name),
                    let id = startableJob(in: name), let job = workload.job(id)
                else { continue }
                if let current = best {
                    let better =
                        job.priority > current.job.priority
                        || (job.priority == current.job.priority
                            && (workload.order(of: job.id) ?? 0) < (workload.order(of: current.job.id) ?? 0))
                    if !better { continue }
                }
                best = (name, job)
            }
            guard let chosen = best else { return }
            ready[chosen.pipeline]?.remove(chosen.job.id)
            if !chosen.job.constraints.isEmpty && !cleared.contains(chosen.job.id) {
                // Constraints are checked before an attempt exists (SPEC 5.6); the job takes no
                // slot meanwhile and comes back to its queue when they hold.
                checking.insert(chosen.job.id)
                effects.append(.check(jobID: chosen.job.id))
                continue
            }
            cleared.remove(chosen.job.id)
            start(chosen.job, now: now)
        }
    }

    private mutating func start(_ job: JobDefinition, now: Date) {
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
        jobs[job.id] = record
        runningPerPipeline[job.pipeline, default: 0] += 1
        runningTotal += 1
        let attempt = AttemptRecord(
            jobID: job.id, number: record.attempts, startedAt: now,
            logPath: logPath(job: job.id, attempt: record.attempts))
        changes.append(.putJob(runID: runID, record))
        changes.append(.putAttempt(runID: runID, attempt))
        emit(RunEvent(time: now, run: runID, job: job.id, attempt: record.attempts, kind: .started))
        effects.append(.start(jobID: job.id, attempt: record.attempts))
    }

    func logPath(job: String, attempt: Int) -> String {
        "\(logDirectory)/\(runID)/\(job)/\(attempt).log"
    }

    // MARK: Results

    /// Applies a finished attempt: the attempt's outcome, the job's next state, its dependents.
    /// - Parameter stopping: the runner is stopping cleanly, so an interrupted attempt does not
    ///   count against the job's retry budget.
    mutating func finish(
        jobID: String, attempt number: Int, result: AttemptResult, attemptRecord: AttemptRecord?,
        now: Date, stopping: Bool, random: inout some RandomSource
    ) {
        guard var record = jobs[jobID], let job = workload.job(jobID), record.state == .running,
            record.attempts == number
        else { return }
        runningPerPipeline[job.pipeline, default: 1] -= 1
        runningTotal -= 1
        var attempt =
            attemptRecord
            ?? AttemptRecord(
                jobID: jobID, number: number, startedAt: record.startedAt ?? now,
                logPath: logPath(job: jobID, attempt: number))
        attempt.outcome = result.outcome
        attempt.finishedAt = now
        attempt.exitCode = result.exitCode
        attempt.signal = result.signal
        attempt.reason = result.reason
        record.exitCode = result.exitCode
        record.crashedInARow = 0
        if let kind = stopRequests.removeValue(forKey: jobID), result.outcome != .succeeded {
            attempt.outcome = .interrupted
            attempt.reason = kind == .cancel ? "cancelled by operator" : "skipped by operator"
            changes.append(.putAttempt(runID: runID, attempt))
            jobs[jobID] = record
            finishByOperator(jobID, kind: kind, now: now)
            return
        }
        changes.append(.putAttempt(runID: runID, attempt))

        if [.failed, .timeout, .tempfail].contains(result.outcome) && !online
            && workload.requiresInternet(job)
        {
            // Failing while offline says nothing about the job: it waits for the internet again,
            // and the attempt does not count (SPEC 5.5).
            emit(
                RunEvent(
                    time: now, run: runID, job: jobID, attempt: number, kind: .failed,
                    reason: result.reason, exitCode: result.exitCode))
            record.uncountedAttempts += 1
            record.state = .waiting
            record.reason = "internet"
            record.waitingSince = now
            jobs[jobID] = record
            changes.append(.putJob(runID: runID, record))
            emit(
                RunEvent(
                    time: now, run: runID, job: jobID, attempt: number, kind: .waiting, reason: "internet"))
            insertReady(job)
            return
        }

        switch result.outcome {
        case .succeeded, .skipped:
            if !result.outputs.isEmpty {
                outputs[jobID] = result.outputs
                changes.append(.putOutputs(runID: runID, jobID: jobID, occurrence: "", result.outputs))
            }
            record.state = result.outcome == .succeeded ? .succeeded : .skipped
            record.reason = result.outcome == .skipped ? (result.reason ?? "skipped") : nil
            record.finishedAt = now
            commitFinal(record, job: job)
            for key in result.outputs.keys.sorted() {
                emit(
                    RunEvent(
                        time: now, run: runID, job: jobID, attempt: number, kind: .output, key: key,
                        value: result.outputs[key]))
            }
            emit(
                RunEvent(
                    time: now, run: runID, job: jobID, attempt: number,
                    kind: result.outcome == .succeeded ? .succeeded : .skipped, reason: record.reason))
            for dependent in dependents[jobID] ?? [] {
                unmetNeeds[dependent, default: 1] -= 1
                if unmetNeeds[dependent] == 0 { makeReadyIfDue(dependent) }
            }
        case .interrupted:
            record.uncountedAttempts += 1
            record.state = .waiting
            record.reason = "interrupted"
            jobs[jobID] = record
            changes.append(.putJob(runID: runID, record))
            emit(
                RunEvent(
                    time: now, run: runID, job: jobID, attempt: number, kind: .interrupted,
                    reason: result.reason))
            if !stopping { insertReady(job) }
        case .failed, .timeout, .tempfail:
            emit(
                RunEvent(
                    time: now, run: runID, job: jobID, attempt: number, kind: .failed,
                    reason: result.reason, exitCode: result.exitCode))
            // What `retry.on` judges: no code for a timeout; a temporary failure counts as exit
            // 75 even without a process (a plugin's retry), so it is retried like a shell job's.
            let judged: Int32? =
                switch result.outcome {
                case .timeout: nil
                case .tempfail: RetryPolicy.tempFailExitCode
                default: result.exitCode
                }
            record = failAttempt(
                record, job: job, exitCode: judged,
                reason: result.reason ?? result.outcome.rawValue, retryAfter: result.retryAfter, now: now,
                random: &random)
        }
    }

    /// Decides whether a failed attempt gets another; records and reports the decision.
    mutating func failAttempt(
        _ failed: JobRecord, job: JobDefinition, exitCode: Int32?, reason: String, retryAfter: Duration?,
        now: Date, random: inout some RandomSource
    ) -> JobRecord {
        var record = failed
        let policy = job.retry
        var allowed = policy.allowsAnotherAttempt(countedAttempts: record.countedAttempts, exitCode: exitCode)
        let delay = retryAfter ?? policy.delay(afterAttempt: record.countedAttempts, random: &random)
        if allowed, let limit = policy.maxElapsed, let first = record.firstStartedAt,
            now.addingTimeInterval(delay.seconds).timeIntervalSince(first) > limit.seconds
        {
            allowed = false
        }
        if allowed {
            record.state = .waiting
            record.reason = "backoff"
            record.nextAttemptAt = now.addingTimeInterval(delay.seconds)
            jobs[job.id] = record
            changes.append(.putJob(runID: runID, record))
            emit(
                RunEvent(
                    time: now, run: runID, job: job.id, attempt: record.attempts, kind: .retrying,
                    delay: delay))
            if delay <= .zero {
                record.reason = nil
                record.nextAttemptAt = nil
                jobs[job.id] = record
                insertReady(job)
            } else {
                delayed[job.id] = record.nextAttemptAt
                emit(
                    RunEvent(
                        time: now, run: runID, job: job.id, attempt: record.attempts, kind: .waiting,
                        reason: "backoff"))
            }
        } else {
            record.state = .failed
            record.reason = reason
            record.finishedAt = now
            commitFinal(record, job: job)
            blockDependents(of: job.id, now: now)
        }
        return record
    }

    fileprivate mutating func finalizeRecovered(_ record: JobRecord, job: JobDefinition, now: Date) {
        commitFinal(record, job: job)
        emit(
            RunEvent(
                time: now, run: runID, job: job.id, attempt: record.attempts, kind: .failed,
                reason: record.reason))
        blockDependents(of: job.id, now: now)
    }

    mutating func commitFinal(_ record: JobRecord, job: JobDefinition) {
        let wasFinal = jobs[job.id]?.state.isFinal ?? false
        jobs[job.id] = record
        changes.append(.putJob(runID: runID, record))
        guard !wasFinal else { return }
        finalCount += 1
        delayed[job.id] = nil
        ready[job.pipeline]?.remove(job.id)
        if workload.pipelines[job.pipeline]?.order == .sequential {
            openByFile[job.pipeline, default: [:]][job.fileIndex, default: 1] -= 1
        }
    }

    /// Blocks `id` because `need` ended badly, and everything that waits on it.
    mutating func block(_ id: String, because need: String, now: Date) {
        block([(id, need)], now: now)
    }

    mutating func blockDependents(of id: String, now: Date) {
        block((dependents[id] ?? []).map { ($0, id) }, now: now)
    }

    mutating func block(_ start: [(job: String, need: String)], now: Date) {
        // Iterative: a failure at the head of a long chain blocks thousands of jobs.
        var pending = start
        while let (job, need) = pending.popLast() {
            guard var record = jobs[job], !record.state.isFinal, record.state != .running,
                let definition = workload.job(job)
            else { continue }
            record.state = .blocked
            record.reason = "needs:\(need)"
            record.finishedAt = now
            commitFinal(record, job: definition)
            emit(RunEvent(time: now, run: runID, job: job, kind: .blocked, reason: record.reason))
            pending.append(contentsOf: (dependents[job] ?? []).map { ($0, job) })
        }
    }

    /// A start that was decided but never happened (the runner began to stop first).
    mutating func cancelStart(jobID: String, attempt: Int, now: Date) {
        guard jobs[jobID]?.state == .running, jobs[jobID]?.attempts == attempt else { return }
        var random = SeededRandomSource(seed: 0)
        finish(
            jobID: jobID, attempt: attempt,
            result: AttemptResult(outcome: .interrupted, reason: "the runner stopped before it started"),
            attemptRecord: nil, now: now, stopping: true, random: &random)
    }
}

extension Scheduler {
    /// An attempt that was running when the last runner died: recorded `interrupted`, counted,
    /// and failed for good after three such crashes in a row (SPEC 5.9).
    mutating func recoverCrashed(
        jobID: String, attempt: AttemptRecord?, now: Date, random: inout some RandomSource
    ) {
        guard var record = jobs[jobID], record.state == .running, let job = workload.job(jobID) else {
            return
        }
        let reason = "the runner died while it ran"
        var interrupted =
            attempt
            ?? AttemptRecord(jobID: jobID, number: record.attempts, startedAt: record.startedAt ?? now)
        interrupted.outcome = .interrupted
        interrupted.finishedAt = now
        interrupted.reason = reason
        changes.append(.putAttempt(runID: runID, interrupted))
        emit(
            RunEvent(
                time: now, run: runID, job: jobID, attempt: record.attempts, kind: .interrupted,
                reason: reason))
        record.crashedInARow += 1
        if record.crashedInARow >= 3 {
            record.state = .failed
            record.reason = "crashed the runner"
            record.finishedAt = now
            finalizeRecovered(record, job: job, now: now)
            return
        }
        _ = failAttempt(
            record, job: job, exitCode: nil, reason: "interrupted", retryAfter: nil, now: now, random: &random
        )
    }
}
