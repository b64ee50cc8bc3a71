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
            pipelineLimits: plan.pipelineLimits)
        run.occurrenceOf = occurrence?.jobID
        run.scheduledAt = occurrence?.scheduledAt
        if occurrence?.manual == true { run.manual = true }
        var opening = Decision()
        // An occurrence is a run of its own, but `status` and the next `run` look first at the
        // run of the one-shot jobs.
        opening.changes = occurrence == nil ? [.putRun(run), .setCurrentRun(runID)] : [.putRun(run)]
        // One change and one effect for every job: made from the plan as they are stored and
        // reported, not held as 100,000 of each in a large run.
        let new = NewJobRecords(runID: runID, plan: plan, now: now)
        opening.changes.append(.putNewJobs(new))
        opening.effects.append(.emitNewJobs(new))
        var scheduler = Scheduler(
            plan: plan, run: run, jobs: JobTable(plan: plan, new: new), suspended: suspended,
            options: options,
            random: random, now: now)
        scheduler.announceSuspensions(now: now)
        opening.append(scheduler.handle(inputs, now: now))
        return (scheduler, opening)
    }

    /// Resumes a run whose runner stopped or died (SPEC 5.9): the attempts it left running are
    /// over, and the operator requests it had not applied yet are applied now, with `inputs`.
    public static func resume(
        _ snapshot: RunSnapshot, plan: RunPlan, runnerPID: Int32, suspended: [String: Int],
        pendingRequests: [OperatorRequest], options: SchedulerOptions, random: any RandomSource,
        inputs: [SchedulerInput] = [], now: Date
    ) -> (Scheduler, Decision) {
        var resumable = ResumableRun(run: snapshot.run, plan: plan)
        resumable.jobs = JobTable(plan: plan, records: snapshot.jobs)
        resumable.attempts = snapshot.attempts
        resumable.outputs = snapshot.outputs
        return resume(
            resumable, plan: plan, runnerPID: runnerPID, suspended: suspended,
            pendingRequests: pendingRequests,
            options: options, random: random, inputs: inputs, now: now)
    }

    /// Resumes a run as ``resume(_:plan:runnerPID:suspended:pendingRequests:options:random:inputs:now:)``
    /// does, from what a store read to resume it.
    public static func resume(
        _ resumable: consuming ResumableRun, plan: RunPlan, runnerPID: Int32, suspended: [String: Int],
        pendingRequests: [OperatorRequest], options: SchedulerOptions, random: any RandomSource,
        inputs: [SchedulerInput] = [], now: Date
    ) -> (Scheduler, Decision) {
        var run = resumable.run
        run.state = .running
        // Running again, so not finished: a finished occurrence that `retry` reopens kept the
        // date it had ended at, and showed `running` with a `finishedAt`.
        run.finishedAt = nil
        run.runnerPID = runnerPID
        run.pipelineLimits = plan.pipelineLimits
        run.jobIDs = plan.jobs.map(\.id)
        var opening = Decision()
        opening.changes = [.putRun(run)]
        var scheduler = Scheduler(
            plan: plan, run: run, jobs: resumable.jobs.handOver(), attempts: resumable.attempts,
            outputs: resumable.outputs,
            suspended: suspended, options: options, random: random, now: now)
        scheduler.announceSuspensions(now: now)
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
                attempt.reason = AttemptEnd.interrupted(.runnerDied).words
                changes.append(.putAttempt(runID: run.id, attempt))
            }
        }
        return changes
    }
}
