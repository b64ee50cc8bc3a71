import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

@testable import JobRunnerLMDB

/// Resuming reads a run row by row into the scheduler's compact table (`resumableRun`): the
/// scheduler it gives must be the one the whole snapshot gives, for every kind of stored record,
/// and must keep SPEC 5.9 (final jobs stay final, running attempts are interrupted and start
/// again uncounted, three interruptions in a row of a job inside the runner fail it).
@Suite struct ResumeReadingTests {
    let start = Date(timeIntervalSinceReferenceDate: 815_000_000.125)
    var now: Date { start.addingTimeInterval(600) }

    /// The plan the run is resumed with; `allowed` now has `allowFailure`, `stale` other needs
    /// than its stored record says.
    let plan = RunPlan(
        jobs: [
            RunPlan.Job(id: "done"), RunPlan.Job(id: "done-nocode", retry: RetryPolicy(attempts: 3)),
            RunPlan.Job(id: "stale", needs: ["done"]), RunPlan.Job(id: "fresh", needs: ["busy"]),
            RunPlan.Job(id: "head"), RunPlan.Job(id: "busy", retry: RetryPolicy(attempts: 1)),
            RunPlan.Job(id: "crashy", runsInRunner: true), RunPlan.Job(id: "after-crashy", needs: ["crashy"]),
            RunPlan.Job(id: "backoff", retry: RetryPolicy(attempts: 3)),
            RunPlan.Job(id: "retry-now", retry: RetryPolicy(attempts: 3)), RunPlan.Job(id: "failed"),
            RunPlan.Job(id: "allowed", allowFailure: true),
            RunPlan.Job(id: "after-allowed", needs: ["allowed"]),
            RunPlan.Job(id: "blocked", needs: ["failed"]), RunPlan.Job(id: "skipped"),
            RunPlan.Job(id: "cancelled"), RunPlan.Job(id: "off", enabled: false),
            RunPlan.Job(id: "interrupted", runsInRunner: true),
            RunPlan.Job(id: "waits-on-failed", needs: ["failed"]),
            RunPlan.Job(id: "cleanup", needs: ["failed"], when: .failure), RunPlan.Job(id: "legacy"),
            RunPlan.Job(id: "elsewhere"),
        ], pipelines: [PipelineDefinition(name: "default", maxConcurrent: 100)])

    func record(
        _ id: String, _ state: JobState, attempts: Int = 0, edit: (inout JobRecord) -> Void = { _ in }
    )
        -> JobRecord
    {
        var record = JobRecord(
            jobID: id, pipeline: "default", maxAttempts: 1, state: state, attempts: attempts)
        if let job = plan.job(id) {
            record.needs = job.needs
            record.maxAttempts = job.retry.attempts
            record.when = job.when
        }
        if attempts > 0 {
            record.firstStartedAt = start
            record.startedAt = start.addingTimeInterval(Double(attempts))
        }
        if state.isFinal { record.finishedAt = start.addingTimeInterval(30) }
        edit(&record)
        return record
    }

    /// A run as a runner killed half way leaves it: one record of every kind.
    var stored: [JobRecord] {
        [
            record("done", .succeeded, attempts: 1) { $0.exitCode = 0 },
            record("done-nocode", .succeeded, attempts: 2) { $0.uncountedAttempts = 1 },
            record("stale", .succeeded, attempts: 1) {
                $0.needs = ["head"]
                $0.exitCode = 0
            },
            record("fresh", .pending), record("head", .pending),
            record("busy", .running, attempts: 1),
            record("crashy", .running, attempts: 3) { $0.crashedInARow = 2 },
            record("after-crashy", .pending),
            record("backoff", .waiting, attempts: 1) {
                $0.reason = .waiting(.backoff)
                $0.nextAttemptAt = self.now.addingTimeInterval(3600)
                $0.exitCode = 1
            },
            record("retry-now", .waiting, attempts: 1) {
                $0.reason = .waiting(.backoff)
                $0.nextAttemptAt = self.start
            },
            record("failed", .failed, attempts: 1) {
                $0.exitCode = 2
                $0.reason = .ended(.exit(2))
            },
            record("allowed", .failed, attempts: 1) { $0.exitCode = 3 },
            record("after-allowed", .pending),
            record("blocked", .blocked) { $0.reason = .ended(.blockedBy("failed")) },
            record("skipped", .skipped) { $0.reason = .ended(.skippedByOperator) },
            record("cancelled", .cancelled, attempts: 1) { $0.reason = .ended(.cancelledByOperator) },
            record("off", .skipped) { $0.reason = .ended(.disabled) },
            record("interrupted", .waiting, attempts: 2) {
                $0.reason = .waiting(.interrupted)
                $0.crashedInARow = 1
                $0.uncountedAttempts = 1
            },
            record("waits-on-failed", .pending), record("cleanup", .pending),
            record("legacy", .failed, attempts: 1),
            record("elsewhere", .succeeded, attempts: 1) { $0.occurrence = "20270101T000000Z" },
            record("stranger", .succeeded, attempts: 1),
        ]
    }

    var run: RunRecord {
        RunRecord(id: "R", state: .running, startedAt: start, jobIDs: plan.jobs.map(\.id), runnerPID: 7)
    }

    /// A store holding the run; in LMDB, `legacy`'s row as `JSONEncoder` wrote it in another
    /// version, which the direct reader leaves to `JSONDecoder`.
    func storeWithRun(_ kind: StoreKind, in directory: String) async throws -> any QueueStore {
        let store = try kind.make(directory)
        try await store.commitAsNewOwner(
            [.putRun(run), .setCurrentRun("R")] + stored.map { .putJob(runID: "R", $0) } + [
                .putAttempt(runID: "R", AttemptRecord(jobID: "busy", number: 1, startedAt: start, pid: 4242)),
                .putAttempt(
                    runID: "R",
                    AttemptRecord(
                        jobID: "backoff", number: 1, outcome: .failed, startedAt: start, finishedAt: start,
                        exitCode: 1)),
                .putAttempt(runID: "R", AttemptRecord(jobID: "crashy", number: 3, startedAt: start)),
                .putOutputs(runID: "R", jobID: "done", occurrence: "", ["k": "v"]),
            ])
        if let lmdb = store as? LMDBQueueStore {
            // With a member this version does not write, which `JSONDecoder` passes over.
            let legacy = try #require(stored.first { $0.jobID == "legacy" })
            let bytes = Array(#"{"note":"old","#.utf8) + Array(try JSONEncoder().encode(legacy)).dropFirst()
            #expect(bytes.withUnsafeBytes { RecordJSON.decodeJobProgress($0) } == nil)
            #expect(bytes.withUnsafeBytes { RecordJSON.decodeJob($0) } == nil)
            let jobs = lmdb.environment.tables.jobs
            try lmdb.environment.write { txn throws(LMDBError) in
                try txn.put(
                    jobs, key: StoreKey.job(runID: "R", jobID: "legacy", occurrence: ""), value: bytes)
            }
        }
        return store
    }

    func resume(_ resumable: ResumableRun) -> (Scheduler, Decision) {
        Scheduler.resume(
            resumable, plan: plan, runnerPID: 8, suspended: [:], pendingRequests: [],
            options: SchedulerOptions(maxRunning: 100, logDirectory: "/l"),
            random: SeededRandomSource(seed: 1),
            now: now)
    }

    func resume(_ snapshot: RunSnapshot) -> (Scheduler, Decision) {
        Scheduler.resume(
            snapshot, plan: plan, runnerPID: 8, suspended: [:], pendingRequests: [],
            options: SchedulerOptions(maxRunning: 100, logDirectory: "/l"),
            random: SeededRandomSource(seed: 1),
            now: now)
    }

    @Test(arguments: StoreKind.allCases)
    func readingRowByRowGivesTheSchedulerTheWholeSnapshotGives(kind: StoreKind) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try await storeWithRun(kind, in: directory)
        let snapshot = try #require(try await store.resumableSnapshot(runID: "R"))
        let resumable = try #require(try await store.resumableRun(runID: "R", plan: plan))
        #expect(resumable.run == snapshot.run)
        #expect(resumable.attempts == snapshot.attempts)
        #expect(resumable.outputs == snapshot.outputs)
        #expect(resumable.attempts.keys.sorted() == ["busy", "crashy"], "only the attempts left open")
        // Each record as stored, with the plan's definition; none for a job the plan lacks.
        for job in plan.jobs {
            var expected = snapshot.jobs[job.id]
            expected?.needs = job.needs
            expected?.maxAttempts = job.retry.attempts
            expected?.allowFailure = job.allowFailure
            expected?.when = job.when
            #expect(resumable.record(job.id) == expected, "\(job.id)")
        }
        #expect(resumable.record("stranger") == nil)
        #expect(resumable.record("elsewhere")?.occurrence == "20270101T000000Z")

        let (old, oldDecision) = resume(snapshot)
        let (new, newDecision) = resume(resumable)
        #expect(newDecision.changes == oldDecision.changes)
        #expect(newDecision.effects == oldDecision.effects)
        for job in plan.jobs {
            #expect(new.record(job.id) == old.record(job.id), "\(job.id)")
            #expect(new.runningAttempt(job.id) == old.runningAttempt(job.id), "\(job.id)")
        }
        #expect(new.counts == old.counts)
        #expect(new.run == old.run)
    }

    /// Rows as earlier versions of schema 1 wrote them (every member, those at their defaults
    /// too) are read as the rows this version writes, by resuming and by a snapshot.
    @Test func rowsWithEveryMemberReadAsRowsWithoutTheDefaults() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try #require(try await storeWithRun(.lmdb, in: directory) as? LMDBQueueStore)
        let written = try #require(try await store.resumableRun(runID: "R", plan: plan))
        let writtenSnapshot = try await store.snapshot(runID: "R")
        let jobs = store.environment.tables.jobs
        try store.environment.write { txn throws(LMDBError) in
            for record in stored where record.jobID != "legacy" {
                let key = StoreKey.job(runID: "R", jobID: record.jobID, occurrence: record.occurrence)
                try txn.put(jobs, key: key, value: CompactRowTests.fullRow(record))
            }
        }
        let full = try #require(try await store.resumableRun(runID: "R", plan: plan))
        #expect(try await store.snapshot(runID: "R") == writtenSnapshot)
        for job in plan.jobs {
            #expect(full.record(job.id) == written.record(job.id), "\(job.id)")
        }
        let (before, beforeDecision) = resume(written)
        let (after, afterDecision) = resume(full)
        #expect(afterDecision.changes == beforeDecision.changes)
        #expect(after.counts == before.counts)
    }

    /// SPEC 5.9 on the records read row by row.
    @Test func aResumedRunKeepsFinalJobsAndStartsTheInterruptedOnesAgain() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try await storeWithRun(.lmdb, in: directory)
        let (scheduler, decision) = resume(try #require(try await store.resumableRun(runID: "R", plan: plan)))
        let before = Dictionary(uniqueKeysWithValues: stored.map { ($0.jobID, $0) })
        for id in ["done", "done-nocode", "failed", "blocked", "skipped", "cancelled", "off", "legacy"] {
            #expect(scheduler.record(id) == before[id], "\(id) stays as it was")
        }
        #expect(scheduler.record("stale")?.needs == ["done"], "the definition is read afresh")
        let interrupted = decision.changes.compactMap { change -> String? in
            guard case .putAttempt(_, let attempt) = change, attempt.outcome == .interrupted else {
                return nil
            }
            return "\(attempt.jobID)#\(attempt.number)"
        }
        #expect(interrupted == ["busy#1", "crashy#3"])
        #expect(scheduler.record("crashy")?.state == .failed)
        #expect(scheduler.record("crashy")?.reason == .ended(.crashedTheRunner))
        #expect(scheduler.record("after-crashy")?.state == .blocked)
        #expect(scheduler.record("waits-on-failed")?.state == .blocked)
        let started = decision.effects.compactMap { effect -> String? in
            if case .startAttempt(let order) = effect { "\(order.jobID)#\(order.attempt)" } else { nil }
        }
        #expect(
            Set(started) == [
                "head#1", "busy#2", "retry-now#2", "after-allowed#1", "interrupted#3", "cleanup#1",
            ])
        #expect(scheduler.record("busy")?.uncountedAttempts == 1, "the interrupted attempt does not count")
        #expect(scheduler.record("backoff")?.state == .waiting, "its delay is not over")
        #expect(scheduler.record("fresh")?.state == .pending)
    }
}
