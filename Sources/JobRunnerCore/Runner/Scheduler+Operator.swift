import Foundation

/// What an operator request did.
public enum OperatorResult: Sendable, Hashable {
    /// Applied; the words say what happened.
    case applied(String)
    /// Applied in part: the job's running attempt must be terminated first.
    case terminating(jobID: String)
    /// Not applicable to the job as it stands; the words say why.
    case refused(String)
}

extension Scheduler {
    /// Applies `retry`, `skip` or `cancel` to a job of this run (SPEC 4).
    mutating func apply(_ request: OperatorRequest, now: Date) -> OperatorResult {
        let id = request.jobID
        guard let record = jobs[id], workload.job(id) != nil else {
            return .refused("run \(runID) has no job '\(id)'")
        }
        switch (request.kind, record.state) {
        case (.cancel, .running), (.skip, .running):
            stopRequests[id] = request.kind
            return .terminating(jobID: id)
        case (.cancel, .pending), (.cancel, .waiting), (.skip, .pending), (.skip, .waiting):
            finishByOperator(id, kind: request.kind, now: now)
            return .applied("\(id) \(request.kind == .cancel ? "cancelled" : "skipped")")
        case (.skip, .failed), (.skip, .blocked), (.skip, .cancelled):
            var skipped = record
            skipped.state = .skipped
            skipped.reason = "skipped by operator"
            skipped.finishedAt = now
            jobs[id] = skipped
            append(.putJob(runID: runID, skipped))
            emit(RunEvent(time: now, run: runID, job: id, kind: .skipped, reason: skipped.reason))
            reopen(blockedBehind: id, now: now)
            return .applied("\(id) skipped; the jobs it blocked may go on")
        case (.retry, .failed), (.retry, .blocked), (.retry, .cancelled):
            reopen([id], now: now)
            reopen(blockedBehind: id, now: now)
            return .applied("\(id) gets another chance, with the jobs it blocked")
        case (.retry, _):
            return .refused(
                "\(id) is \(record.state.rawValue); only a failed, blocked or cancelled job can be retried")
        case (.skip, _), (.cancel, _):
            return .refused("\(id) is already \(record.state.rawValue)")
        }
    }

    /// Ends a job that is not (or no longer) running as the operator asked; the caller has
    /// already released a running attempt's slot.
    mutating func finishByOperator(_ id: String, kind: OperatorRequest.Kind, now: Date) {
        guard var record = jobs[id], let job = workload.job(id) else { return }
        record.state = kind == .cancel ? .cancelled : .skipped
        record.reason = kind == .cancel ? "cancelled by operator" : "skipped by operator"
        record.finishedAt = now
        record.nextAttemptAt = nil
        commitFinal(record, job: job)
        emit(
            RunEvent(
                time: now, run: runID, job: id, kind: kind == .cancel ? .cancelled : .skipped,
                reason: record.reason))
        if kind == .cancel {
            blockDependents(of: id, now: now)
        } else {
            for dependent in dependents[id] ?? [] {
                unmetNeeds[dependent, default: 1] -= 1
                if unmetNeeds[dependent] == 0 { makeReadyIfDue(dependent) }
            }
        }
    }

    /// Reopens the jobs that were blocked, directly or through others, because of `id`.
    private mutating func reopen(blockedBehind id: String, now: Date) {
        var found: [String] = []
        var pending = dependents[id] ?? []
        var seen = Set<String>()
        while let job = pending.popLast() {
            guard seen.insert(job).inserted, jobs[job]?.state == .blocked else { continue }
            found.append(job)
            pending.append(contentsOf: dependents[job] ?? [])
        }
        reopen(found, now: now)
    }

    /// Makes final jobs pending again with a fresh retry budget, then lets each become ready,
    /// or blocked again if another of its needs still stands in the way.
    private mutating func reopen(_ ids: [String], now: Date) {
        for id in ids {
            guard var record = jobs[id], record.state.isFinal, let job = workload.job(id) else { continue }
            record.state = .pending
            record.reason = nil
            record.finishedAt = nil
            record.nextAttemptAt = nil
            record.firstStartedAt = nil
            record.uncountedAttempts = record.attempts
            record.crashedInARow = 0
            jobs[id] = record
            finalCount -= 1
            if workload.pipelines[job.pipeline]?.order == .sequential {
                openByFile[job.pipeline, default: [:]][job.fileIndex, default: 0] += 1
            }
            append(.putJob(runID: runID, record))
            emit(RunEvent(time: now, run: runID, job: id, kind: .queued))
        }
        for id in ids {
            guard let job = workload.job(id), jobs[id]?.state == .pending else { continue }
            unmetNeeds[id] = job.needs.filter { jobs[$0]?.state.satisfiesNeeds != true }.count
            let failedNeed = job.needs.first { need in
                jobs[need].map { $0.state.isFinal && !$0.state.satisfiesNeeds } ?? false
            }
            if let failedNeed {
                block(id, because: failedNeed, now: now)
            } else {
                makeReadyIfDue(id)
            }
        }
    }

    /// Takes the pipelines' persisted suspend counts; reports pipelines that became suspended
    /// or resumed.
    mutating func updateSuspensions(_ counts: [String: Int], now: Date) {
        for name in Set(counts.keys).union(suspended.keys).sorted() {
            let before = suspended[name, default: 0]
            let after = counts[name, default: 0]
            suspended[name] = after
            if before == 0 && after > 0 {
                emit(RunEvent(time: now, run: runID, kind: .suspended, pipeline: name))
            } else if before > 0 && after == 0 {
                emit(RunEvent(time: now, run: runID, kind: .resumed, pipeline: name))
            }
        }
    }
}
