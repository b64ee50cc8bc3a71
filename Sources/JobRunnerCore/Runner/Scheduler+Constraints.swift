import Foundation

/// Constraints: checks before a start, and the shared `satisfy` when one fails.
extension Scheduler {
    // MARK: Constraints

    mutating func constraintsChecked(_ jobID: String, failed: String?, now: Date) {
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
    mutating func satisfyEnded(_ name: String, outcome: SatisfyOutcome, now: Date) {
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
