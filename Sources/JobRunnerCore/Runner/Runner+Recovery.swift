import Foundation

extension Runner {
    /// Opens the run to work on: resumes the current one when it was interrupted and has the
    /// same jobs (SPEC 5.9), else starts a new one. Attempts a dead runner left `running` are
    /// recorded `interrupted` and their process groups ended.
    func prepare(now: Date, random: inout some RandomSource) async throws(StoreError)
        -> (Scheduler, resumed: Bool, RunRecord)
    {
        let suspended = try store.pipelines().mapValues(\.suspended)
        var earlier: [StoreChange] = []
        if let snapshot = try store.currentSnapshot(), !snapshot.run.state.isFinal {
            await endOrphans(in: snapshot)
            if !options.startNewRun && Set(snapshot.run.jobIDs) == Set(workload.jobs.map(\.id)) {
                return resume(snapshot, suspended: suspended, now: now, random: &random)
            }
            earlier = supersede(snapshot, now: now)
        }
        var runID = Self.makeRunID(now: now, random: &random)
        // Two runs started in the same millisecond must not share an id (one would overwrite
        // the other's records).
        while try store.snapshot(runID: runID) != nil { runID = Self.makeRunID(now: now, random: &random) }
        let run = RunRecord(
            id: runID, state: .running, startedAt: now, jobIDs: workload.jobs.map(\.id),
            runnerPID: options.runnerPID,
            pipelineLimits: workload.pipelines.mapValues(\.maxConcurrent))
        var records: [String: JobRecord] = [:]
        var changes = earlier + [.putRun(run), .setCurrentRun(runID)]
        var events: [RunEvent] = []
        for job in workload.jobs {
            var record = JobRecord(
                jobID: job.id, pipeline: job.pipeline, needs: job.needs, maxAttempts: job.retry.attempts)
            if job.enabled {
                events.append(RunEvent(time: now, run: runID, job: job.id, kind: .queued))
            } else {
                record.state = .skipped
                record.reason = "disabled"
                record.finishedAt = now
                events.append(
                    RunEvent(time: now, run: runID, job: job.id, kind: .skipped, reason: "disabled"))
            }
            records[job.id] = record
            changes.append(.putJob(runID: runID, record))
        }
        var scheduler = Scheduler(
            workload: workload, runID: runID, jobs: records, outputs: [:], suspended: suspended,
            maxRunning: options.maxRunning, logDirectory: options.logDirectory, now: now)
        let decided = scheduler.takeBatch()
        for change in changes { scheduler.append(change) }
        for event in events { scheduler.emit(event) }
        for change in decided.changes { scheduler.append(change) }
        for case .emit(let event) in decided.effects { scheduler.emit(event) }
        return (scheduler, false, run)
    }

    private func resume(
        _ snapshot: RunSnapshot, suspended: [String: Int], now: Date, random: inout some RandomSource
    ) -> (Scheduler, resumed: Bool, RunRecord) {
        var run = snapshot.run
        run.state = .running
        run.runnerPID = options.runnerPID
        run.pipelineLimits = workload.pipelines.mapValues(\.maxConcurrent)
        run.jobIDs = workload.jobs.map(\.id)
        var jobs = snapshot.jobs
        for job in workload.jobs {
            // Definitions are read afresh on resume (SPEC 5.9); keep the stored copies in step.
            jobs[job.id]?.needs = job.needs
            jobs[job.id]?.maxAttempts = job.retry.attempts
            jobs[job.id]?.pipeline = job.pipeline
        }
        var scheduler = Scheduler(
            workload: workload, runID: run.id, jobs: jobs, outputs: snapshot.outputs,
            suspended: suspended, maxRunning: options.maxRunning, logDirectory: options.logDirectory, now: now
        )
        scheduler.append(.putRun(run))
        for job in workload.jobs where snapshot.jobs[job.id]?.state == .running {
            let attempt = snapshot.attempts[job.id]?.last { $0.outcome == nil }
            scheduler.recoverCrashed(jobID: job.id, attempt: attempt, now: now, random: &random)
        }
        return (scheduler, true, run)
    }

    /// Closes a run that will not be resumed: its running attempts become `interrupted`.
    private func supersede(_ snapshot: RunSnapshot, now: Date) -> [StoreChange] {
        var run = snapshot.run
        run.state = .stopped
        var changes: [StoreChange] = [.putRun(run)]
        for (jobID, record) in snapshot.jobs where record.state == .running {
            var job = record
            job.state = .waiting
            job.reason = "interrupted"
            changes.append(.putJob(runID: run.id, job))
            if var attempt = snapshot.attempts[jobID]?.last(where: { $0.outcome == nil }) {
                attempt.outcome = .interrupted
                attempt.finishedAt = now
                attempt.reason = "the runner died while it ran"
                changes.append(.putAttempt(runID: run.id, attempt))
            }
        }
        return changes
    }

    private func endOrphans(in snapshot: RunSnapshot) async {
        guard let orphans else { return }
        for attempts in snapshot.attempts.values {
            for attempt in attempts where attempt.outcome == nil {
                await orphans.terminate(
                    Orphan(
                        runID: snapshot.run.id, jobID: attempt.jobID, attempt: attempt.number,
                        pid: attempt.pid,
                        startTime: attempt.pidStartTime))
            }
        }
    }

    /// A sortable run id: UTC date and time to the millisecond, then four random hex digits.
    static func makeRunID(now: Date, random: inout some RandomSource) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second, .nanosecond], from: now)
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let millis = (parts.nanosecond ?? 0) / 1_000_000
        let suffix = String(Int(random.nextUnit() * 65536), radix: 16)
        return pad(parts.year, 4) + pad(parts.month, 2) + pad(parts.day, 2) + "T" + pad(parts.hour, 2)
            + pad(parts.minute, 2) + pad(parts.second, 2) + "." + pad(millis, 3) + "Z-"
            + String(repeating: "0", count: 4 - suffix.count) + suffix
    }
}
