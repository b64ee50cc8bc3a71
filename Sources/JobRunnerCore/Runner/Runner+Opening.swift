import Foundation

extension Runner {
    /// The run to work on, and what the scheduler decided on opening it.
    struct Opened {
        var scheduler: Scheduler
        var decision: Decision
        var resumed: Bool
        /// Occurrence runs a dead or stopped runner left unfinished, to resume.
        var unfinishedOccurrences: [(Occurrence, RunSnapshot)]

        /// The parts, for the caller to take apart in one statement.
        var parts: (Scheduler, Decision, Bool, [(Occurrence, RunSnapshot)]) {
            (scheduler, decision, resumed, unfinishedOccurrences)
        }
    }

    /// Opens the run to work on: resumes the current one when it was interrupted and has the
    /// same jobs (SPEC 5.9), else starts a new one. The process groups of attempts a dead runner
    /// left running are ended first.
    func open(now: Date, random: any RandomSource, inputs: [SchedulerInput]) async throws(StoreError)
        -> Opened
    {
        let suspended = try await store.base.pipelines().mapValues(\.suspended)
        // A disabled periodic job has no timetable entry, but is no one-shot job either. By
        // index: a copy of each of 100,000 definitions costs more than the look.
        var periodicIDs = Set(periodic.map(\.id))
        for index in workload.jobs.indices where workload.jobs[index].isPeriodic {
            periodicIDs.insert(workload.jobs[index].id)
        }
        let full = RunPlan(workload)
        // Periodic jobs run as occurrences, each a run of its own; the run holds the others.
        let plan =
            periodicIDs.isEmpty
            ? full
            : RunPlan(
                jobs: full.jobs.filter { !periodicIDs.contains($0.id) },
                pipelines: Array(full.pipelines.values))
        let unfinished = try await unfinishedOccurrences(periodic: periodicIDs)
        for (_, snapshot) in unfinished {
            await endOrphans(runID: snapshot.run.id, attempts: snapshot.attempts)
            await endSatisfies(runID: snapshot.run.id)
        }
        var earlier: [StoreChange] = []
        // Resuming, superseding and ending orphans look only at the attempts left open.
        let current = try await store.base.currentRunID()
        if let current, let resumable = try await store.base.resumableRun(runID: current, plan: plan),
            !resumable.run.state.isFinal,
            resumable.run.occurrenceOf == nil
        {
            await endOrphans(runID: resumable.run.id, attempts: resumable.attempts)
            await endSatisfies(runID: resumable.run.id)
            if !options.startNewRun && plan.hasJobs(resumable.run.jobIDs) {
                let requests = try await store.base.requests(runID: resumable.run.id)
                let (scheduler, decision) = Scheduler.resume(
                    consume resumable, plan: plan, runnerPID: options.runnerPID, suspended: suspended,
                    pendingRequests: requests, options: schedulerOptions,
                    random: random, inputs: inputs, now: now)
                return Opened(
                    scheduler: scheduler, decision: decision, resumed: true, unfinishedOccurrences: unfinished
                )
            }
            // Another set of jobs: the records of those the plan does not have are read too.
            if let snapshot = try await store.base.resumableSnapshot(runID: current) {
                earlier = Scheduler.supersede(snapshot, now: now)
            }
        }
        var idRandom = random
        var runID = Self.makeRunID(now: now, random: &idRandom)
        if plan.jobs.isEmpty, let current, let record = try await store.base.run(id: current),
            record.jobIDs.isEmpty, record.occurrenceOf == nil
        {
            // Periodic jobs alone: the run of one-shot jobs has none, and the empty one of the
            // last start is opened again rather than one more listed (and kept) per start.
            runID = current
        } else {
            // Two runs started in the same millisecond must not share an id (one would
            // overwrite the other's records).
            while try await store.base.snapshot(runID: runID) != nil {
                runID = Self.makeRunID(now: now, random: &idRandom)
            }
        }
        let (scheduler, opening) = Scheduler.newRun(
            plan: plan, runID: runID, runnerPID: options.runnerPID, suspended: suspended,
            options: schedulerOptions,
            random: random, inputs: inputs, now: now)
        var decision = opening
        if !earlier.isEmpty { decision.changes.insert(contentsOf: earlier, at: 0) }
        return Opened(
            scheduler: scheduler, decision: decision, resumed: false, unfinishedOccurrences: unfinished)
    }

    /// Occurrence runs of today's periodic jobs that are not final: a runner stopped or died
    /// while they ran.
    private func unfinishedOccurrences(periodic: Set<String>) async throws(StoreError) -> [(
        Occurrence, RunSnapshot
    )] {
        guard !periodic.isEmpty else { return [] }
        var found: [(Occurrence, RunSnapshot)] = []
        for run in try await store.base.runs() where !run.state.isFinal {
            guard let jobID = run.occurrenceOf, let date = run.scheduledAt, periodic.contains(jobID),
                let snapshot = try await store.base.resumableSnapshot(runID: run.id)
            else { continue }
            found.append((Occurrence(jobID: jobID, scheduledAt: date, manual: run.manual == true), snapshot))
        }
        return found
    }

    /// A date as run ids start: UTC to the millisecond, `20261122T143425.472Z`, so ids sort by it.
    static func compactTimestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let millis = (parts.nanosecond ?? 0) / 1_000_000
        return pad(parts.year, 4) + pad(parts.month, 2) + pad(parts.day, 2) + "T" + pad(parts.hour, 2)
            + pad(parts.minute, 2) + pad(parts.second, 2) + "." + pad(millis, 3) + "Z"
    }

    /// Ends the processes of a run's attempts left without an outcome (`attempts` by job id).
    private func endOrphans(runID: String, attempts byJob: [String: [AttemptRecord]]) async {
        guard let orphans else { return }
        // All at once: a look for an attempt's processes reads every process on the machine.
        let left = byJob.keys.sorted().flatMap { id in
            (byJob[id] ?? []).filter { $0.outcome == nil }.map { attempt in
                Orphan(
                    runID: runID, jobID: attempt.jobID, attempt: attempt.number, pid: attempt.pid,
                    startTime: attempt.pidStartTime)
            }
        }
        if !left.isEmpty { await orphans.terminate(left) }
    }

    /// Ends each constraint's `satisfy` a dead runner left running in the run, as recorded in
    /// its constraint folder, so the run's next `satisfy` never runs beside it (SPEC 5.6).
    private func endSatisfies(runID: String) async {
        let folder = LogLayout.constraintFolder(in: options.logDirectory, runID: runID)
        guard let orphans, let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            return
        }
        for name in names.sorted() where name.hasSuffix(".pid") {
            let path = "\(folder)/\(name)"
            if let text = try? String(contentsOfFile: path, encoding: .utf8),
                let satisfy = SatisfyProcess(recorded: text)
            {
                await orphans.terminate(satisfy)
            }
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// A sortable run id: UTC date and time to the millisecond, then four random hex digits.
    static func makeRunID(now: Date, random: inout any RandomSource) -> String {
        let suffix = String(Int(random.nextUnit() * 65536), radix: 16)
        return compactTimestamp(now) + "-" + String(repeating: "0", count: 4 - suffix.count) + suffix
    }

}
