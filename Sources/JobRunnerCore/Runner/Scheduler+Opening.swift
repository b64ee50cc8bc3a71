import Foundation

extension Scheduler {
    /// A fresh run of every job of `plan`: its records, the `queued` (or, for a disabled job,
    /// `skipped`) events, and what starts first once `inputs` (what is known already, such as
    /// connectivity) are taken.
    public static func newRun(
        plan: RunPlan, runID: String, runnerPID: Int32, suspended: [String: Int], options: SchedulerOptions,
        random: any RandomSource, inputs: [SchedulerInput] = [], occurrence: Occurrence? = nil, now: Date
    ) -> (Scheduler, Decision) {
        var run = RunRecord(
            id: runID, state: .running, startedAt: now, jobIDs: plan.jobs.map(\.id), runnerPID: runnerPID,
            pipelineLimits: plan.pipelines.mapValues(\.maxConcurrent))
        run.occurrenceOf = occurrence?.jobID
        run.scheduledAt = occurrence?.scheduledAt
        var opening = Decision()
        // An occurrence is a run of its own, but `status` and the next `run` look first at the
        // run of the one-shot jobs.
        opening.changes = occurrence == nil ? [.putRun(run), .setCurrentRun(runID)] : [.putRun(run)]
        // Sized once: a run of 100,000 jobs opens with as many records and events.
        opening.changes.reserveCapacity(opening.changes.count + plan.jobs.count)
        opening.effects.reserveCapacity(plan.jobs.count)
        var records: [String: JobRecord] = [:]
        records.reserveCapacity(plan.jobs.count)
        for job in plan.jobs {
            var record = JobRecord(
                jobID: job.id, pipeline: job.pipeline, needs: job.needs, maxAttempts: job.retry.attempts)
            record.allowFailure = job.allowFailure
            record.when = job.when
            if job.enabled {
                opening.effects.append(.emit(RunEvent(time: now, run: runID, job: job.id, kind: .queued)))
            } else {
                record.state = .skipped
                record.reason = .ended(.disabled)
                record.finishedAt = now
                opening.effects.append(
                    .emit(
                        RunEvent(
                            time: now, run: runID, job: job.id, kind: .skipped,
                            reason: EndReason.disabled.words)))
            }
            records[job.id] = record
            opening.changes.append(.putJob(runID: runID, record))
        }
        // Consumed, so the scheduler's first change to a record does not copy the whole table.
        var scheduler = Scheduler(
            plan: plan, run: run, jobs: consume records, suspended: suspended, options: options,
            random: random, now: now)
        let first = scheduler.handle(inputs, now: now)
        // Exactly: growing an array of 100,000 records by appending would double it.
        opening.changes.reserveCapacity(opening.changes.count + first.changes.count)
        opening.effects.reserveCapacity(opening.effects.count + first.effects.count)
        opening.append(first)
        return (scheduler, opening)
    }

    /// Resumes a run whose runner stopped or died (SPEC 5.9): the attempts it left running are
    /// over, and the operator requests it had not applied yet are applied now, with `inputs`.
    public static func resume(
        _ snapshot: RunSnapshot, plan: RunPlan, runnerPID: Int32, suspended: [String: Int],
        pendingRequests: [OperatorRequest], options: SchedulerOptions, random: any RandomSource,
        inputs: [SchedulerInput] = [], now: Date
    ) -> (Scheduler, Decision) {
        var run = snapshot.run
        run.state = .running
        run.runnerPID = runnerPID
        run.pipelineLimits = plan.pipelines.mapValues(\.maxConcurrent)
        run.jobIDs = plan.jobs.map(\.id)
        var opening = Decision()
        opening.changes = [.putRun(run)]
        var scheduler = Scheduler(
            plan: plan, run: run, jobs: snapshot.jobs, attempts: snapshot.attempts, outputs: snapshot.outputs,
            suspended: suspended, options: options, random: random, now: now)
        opening.append(
            scheduler.handle(
                [.runnerDied, .operatorRequests(pendingRequests, stored: true)] + inputs, now: now))
        return (scheduler, opening)
    }

    /// Closes a run that will not be resumed (another set of jobs, or `--new`): it is `stopped`,
    /// and the attempts its runner left running are `interrupted`.
    public static func supersede(_ snapshot: RunSnapshot, now: Date) -> [StoreChange] {
        var run = snapshot.run
        run.state = .stopped
        var changes: [StoreChange] = [.putRun(run)]
        for jobID in run.jobIDs {
            guard var record = snapshot.jobs[jobID], record.state == .running else { continue }
            record.state = .waiting
            record.reason = .waiting(.interrupted)
            changes.append(.putJob(runID: run.id, record))
            if var attempt = snapshot.attempts[jobID]?.last(where: { $0.outcome == nil }) {
                attempt.outcome = .interrupted
                attempt.finishedAt = now
                attempt.reason = "the runner died while it ran"
                changes.append(.putAttempt(runID: run.id, attempt))
            }
        }
        return changes
    }
}
