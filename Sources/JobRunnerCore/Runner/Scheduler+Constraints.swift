import Foundation

extension Scheduler {
    /// The checks of a job's constraints are done: `failed` names the first that did not hold.
    mutating func constraintsChecked(jobID: String, failed: String?, now: Date) {
        guard checking.remove(jobID) != nil, var record = jobs[jobID], !record.state.isFinal,
            let job = workload.job(jobID)
        else { return }
        guard let name = failed else {
            cleared.insert(jobID)
            insertReady(job)
            return
        }
        record.state = .waiting
        record.reason = "constraint:\(name)"
        record.waitingSince = now
        jobs[jobID] = record
        append(.putJob(runID: runID, record))
        emit(RunEvent(time: now, run: runID, job: jobID, kind: .waiting, reason: record.reason))
        waitingOnConstraint[name, default: []].append(jobID)
        if satisfying.insert(name).inserted {
            effects.append(.satisfy(constraint: name))
        }
    }

    /// A constraint's `satisfy` ended: on success the jobs waiting on it go on; on failure each
    /// waiting job's attempt fails with the last line of satisfy's output, and the retry policy
    /// decides (SPEC 5.6).
    mutating func constraintSatisfied(
        _ name: String, outcome: SatisfyOutcome, now: Date, random: inout some RandomSource
    ) {
        satisfying.remove(name)
        for jobID in waitingOnConstraint.removeValue(forKey: name) ?? [] {
            guard var record = jobs[jobID], !record.state.isFinal, record.reason == "constraint:\(name)",
                let job = workload.job(jobID)
            else { continue }
            switch outcome {
            case .satisfied:
                cleared.insert(jobID)
                insertReady(job)
            case .failed(let lastLine):
                let reason = "constraint \(name) failed: \(lastLine)"
                record.attempts += 1
                if record.firstStartedAt == nil { record.firstStartedAt = now }
                record.waitingSince = nil
                append(
                    .putAttempt(
                        runID: runID,
                        AttemptRecord(
                            jobID: jobID, number: record.attempts, outcome: .failed, startedAt: now,
                            finishedAt: now,
                            reason: reason)))
                emit(
                    RunEvent(
                        time: now, run: runID, job: jobID, attempt: record.attempts, kind: .failed,
                        reason: reason))
                _ = failAttempt(
                    record, job: job, exitCode: nil, reason: reason, retryAfter: nil, now: now,
                    random: &random)
            }
        }
    }
}
