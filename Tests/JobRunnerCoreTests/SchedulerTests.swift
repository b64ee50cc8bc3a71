import Foundation
import JobRunnerCore
import Testing

/// Drives a ``Scheduler`` input by input on a hand-moved date, and reads what it decided: no
/// runner, no store, no process.
struct SchedulerDriver {
    private(set) var scheduler: Scheduler
    private(set) var now = Date(timeIntervalSince1970: 1_800_000_000)
    /// What the last input decided (the opening, at first).
    private(set) var last: Decision

    init(
        _ jobs: [RunPlan.Job], pipelines: [PipelineDefinition] = [], maxRunning: Int? = nil,
        suspended: [String: Int] = [:], inputs: [SchedulerInput] = [], seed: UInt64 = 1
    ) {
        (scheduler, last) = Scheduler.newRun(
            plan: RunPlan(jobs: jobs, pipelines: pipelines), runID: "R", runnerPID: 1, suspended: suspended,
            options: SchedulerOptions(maxRunning: maxRunning, logDirectory: "/logs"),
            random: SeededRandomSource(seed: seed), inputs: inputs, now: now)
    }

    /// Takes inputs together, as the runner does with those that arrive at once.
    @discardableResult
    mutating func send(_ inputs: SchedulerInput...) -> Decision {
        last = scheduler.handle(inputs, now: now)
        return last
    }

    /// Moves time on and says so.
    mutating func advance(_ seconds: TimeInterval) {
        now = now.addingTimeInterval(seconds)
        send(.tick)
    }

    mutating func end(_ id: String, _ result: AttemptResult) {
        let attempt = scheduler.record(id)?.attempts ?? 0
        send(.attemptEnded(jobID: id, attempt: attempt, result))
    }

    mutating func succeed(_ id: String, outputs: [String: String] = [:]) {
        end(id, AttemptResult(.succeeded, exitCode: 0, outputs: outputs))
    }

    mutating func fail(_ id: String, exitCode: Int32 = 1) { end(id, .failed(exitCode: exitCode)) }

    mutating func request(
        _ kind: OperatorRequest.Kind, _ id: String, requestID: UInt64 = 1, stored: Bool = false
    )
        -> OperatorResult?
    {
        send(
            .operatorRequests(
                [OperatorRequest(id: requestID, kind: kind, jobID: id, requestedAt: now)], stored: stored))
        return last.answers.first?.result
    }

    /// Jobs whose attempt the last decision starts, in order.
    var started: [String] {
        last.effects.compactMap { if case .startAttempt(let order) = $0 { order.jobID } else { nil } }
    }

    /// The attempt orders of the last decision.
    var orders: [AttemptOrder] {
        last.effects.compactMap { if case .startAttempt(let order) = $0 { order } else { nil } }
    }

    /// `kind job` of each event of the last decision.
    var events: [String] { last.events.map { "\($0.kind.rawValue) \($0.job ?? $0.pipeline ?? "")" } }

    func state(_ id: String) -> JobState? { scheduler.record(id)?.state }
    func reason(_ id: String) -> JobReason? { scheduler.record(id)?.reason }
}

func planJob(
    _ id: String, needs: [String] = [], pipeline: String = "default", priority: Int = 0, file: Int = 0,
    internet: Bool = false, constraints: [String] = [], retry: RetryPolicy = RetryPolicy(),
    enabled: Bool = true,
    inRunner: Bool = false
) -> RunPlan.Job {
    RunPlan.Job(
        id: id, pipeline: pipeline, needs: needs, priority: priority, fileIndex: file,
        requiresInternet: internet,
        constraints: constraints, retry: retry, enabled: enabled, runsInRunner: inRunner)
}

let noJitter = RetryPolicy(attempts: 5, delay: .seconds(2), factor: 3, maxDelay: .seconds(60), jitter: 0)

@Suite struct SchedulerGraphTests {
    @Test func jobsWithoutNeedsStartAtOnceInFileOrder() {
        let driver = SchedulerDriver([planJob("a"), planJob("b"), planJob("c", needs: ["a"])])
        #expect(driver.started == ["a", "b"])
        #expect(driver.state("c") == .pending)
    }

    /// A large run's opening is one change and one event effect for all its jobs (made as they
    /// are stored and reported), plus what starts: holding one of each per job cost about 400
    /// bytes a job at the peak of a 100,000-job run's memory.
    @Test func aRunsOpeningDoesNotGrowWithItsJobs() {
        let jobs = (0..<1_000).map { planJob("j\($0)", needs: $0 == 0 ? [] : ["j\($0 - 1)"]) }
        let driver = SchedulerDriver(jobs)
        #expect(driver.started == ["j0"])
        #expect(driver.last.changes.count <= 5, "\(driver.last.changes.count) changes")
        #expect(driver.last.effects.count <= 3, "\(driver.last.effects.count) effects")
        let events = driver.last.events
        #expect(events.count == 1_001)
        #expect(events.prefix(2).map { "\($0.kind.rawValue) \($0.job ?? "")" } == ["queued j0", "queued j1"])
        #expect(events.last.map { "\($0.kind.rawValue) \($0.job ?? "")" } == "started j0")
    }

    @Test func aJobStartsWhenItsLastNeedSucceeds() {
        var driver = SchedulerDriver([planJob("a"), planJob("b"), planJob("c", needs: ["a", "b"])])
        driver.succeed("a")
        #expect(driver.started.isEmpty)
        driver.succeed("b")
        #expect(driver.started == ["c"])
    }

    @Test func aFailedNeedBlocksItsDependentsTransitively() {
        var driver = SchedulerDriver([planJob("a"), planJob("b", needs: ["a"]), planJob("c", needs: ["b"])])
        driver.fail("a", exitCode: 2)
        #expect(driver.state("a") == .failed)
        #expect(driver.reason("a") == .ended(.exit(2)))
        #expect(driver.reason("b") == .ended(.blockedBy("a")))
        #expect(driver.reason("c") == .ended(.blockedBy("b")))
        #expect(driver.scheduler.isFinished)
    }

    @Test func aSkippedNeedLetsDependentsGoOn() {
        var driver = SchedulerDriver([planJob("a"), planJob("b", needs: ["a"])])
        driver.end("a", AttemptResult(.skipped("nothing to do"), exitCode: 0))
        #expect(driver.reason("a") == .ended(.message("nothing to do")))
        #expect(driver.started == ["b"])
    }

    @Test func aDisabledJobIsSkippedAtOnceAndItsDependentsRun() {
        let driver = SchedulerDriver([planJob("off", enabled: false), planJob("after", needs: ["off"])])
        #expect(driver.reason("off") == .ended(.disabled))
        #expect(driver.started == ["after"])
    }

    @Test func outputsOfNeedsComeWithTheAttemptOrder() {
        var driver = SchedulerDriver([planJob("a"), planJob("b", needs: ["a"])])
        driver.succeed("a", outputs: ["dir": "/tmp/x"])
        #expect(driver.orders.first?.neededOutputs == ["a": ["dir": "/tmp/x"]])
        #expect(driver.orders.first?.logPath == "/logs/R/b/1.log")
        #expect(
            driver.last.changes.contains(
                .putOutputs(runID: "R", jobID: "a", occurrence: "", ["dir": "/tmp/x"])))
    }

    @Test func eachStartIsStoredWithItsAttemptBeforeItIsPerformed() {
        let driver = SchedulerDriver([planJob("a")])
        let attempts = driver.last.changes.compactMap { change -> AttemptRecord? in
            if case .putAttempt(_, let attempt) = change { attempt } else { nil }
        }
        #expect(attempts.map(\.jobID) == ["a"])
        #expect(driver.events.suffix(1) == ["started a"])
    }

    @Test func aPidRidesWithTheNextCommit() {
        var driver = SchedulerDriver([planJob("a"), planJob("b")])
        driver.send(.attemptSpawned(jobID: "a", attempt: 1, pid: 4242, pidStartTime: 7))
        #expect(driver.last.changes.isEmpty, "a pid alone costs no commit")
        driver.succeed("b")
        guard case .putAttempt(_, let attempt) = driver.last.changes.first else {
            Issue.record("the pid was not stored first: \(driver.last.changes)")
            return
        }
        #expect(attempt.pid == 4242 && attempt.pidStartTime == 7)
    }

    @Test func closingARunWithAFailureMarksItFailed() {
        var driver = SchedulerDriver([planJob("a"), planJob("b")])
        driver.succeed("a")
        driver.fail("b")
        var scheduler = driver.scheduler
        let closing = scheduler.close(now: driver.now)
        #expect(scheduler.run.state == .failed)
        #expect(closing.events.map(\.kind) == [.runFinished])
    }
}

@Suite struct SchedulerPipelineTests {
    @Test func higherPriorityStartsFirstThenFileOrder() {
        let pipelines = [PipelineDefinition(name: "p", maxConcurrent: 1)]
        var driver = SchedulerDriver(
            [
                planJob("low", pipeline: "p"), planJob("first", pipeline: "p"),
                planJob("high", pipeline: "p", priority: 5),
            ], pipelines: pipelines)
        #expect(driver.started == ["high"])
        driver.succeed("high")
        #expect(driver.started == ["low"])
        driver.succeed("low")
        #expect(driver.started == ["first"])
    }

    @Test func maxConcurrentCapsRunningAttempts() {
        let pipelines = [PipelineDefinition(name: "p", maxConcurrent: 2)]
        var driver = SchedulerDriver((0..<5).map { planJob("j\($0)", pipeline: "p") }, pipelines: pipelines)
        #expect(driver.started == ["j0", "j1"])
        driver.succeed("j0")
        #expect(driver.started == ["j2"])
        #expect(driver.scheduler.runningCount == 2)
    }

    @Test func maxConcurrentZeroIsUnlimited() {
        let pipelines = [PipelineDefinition(name: "p", maxConcurrent: 0)]
        let driver = SchedulerDriver((0..<50).map { planJob("j\($0)", pipeline: "p") }, pipelines: pipelines)
        #expect(driver.started.count == 50)
    }

    @Test func theGlobalCapAppliesAcrossPipelines() {
        let pipelines = [PipelineDefinition(name: "a"), PipelineDefinition(name: "b")]
        var driver = SchedulerDriver(
            [planJob("a1", pipeline: "a"), planJob("a2", pipeline: "a"), planJob("b1", pipeline: "b")],
            pipelines: pipelines, maxRunning: 2)
        #expect(driver.started == ["a1", "a2"])
        driver.succeed("a2")
        #expect(driver.started == ["b1"])
    }

    @Test func aSequentialPipelineFinishesEarlierFilesFirst() {
        let pipelines = [PipelineDefinition(name: "s", maxConcurrent: 0, order: .sequential)]
        var driver = SchedulerDriver(
            [
                planJob("a", pipeline: "s", file: 0), planJob("b", pipeline: "s", priority: 9, file: 1),
                planJob("c", pipeline: "s", file: 0),
            ], pipelines: pipelines)
        #expect(driver.started == ["a", "c"], "b's priority does not let it jump its file's turn")
        driver.succeed("a")
        #expect(driver.started.isEmpty)
        driver.fail("c")
        #expect(driver.started == ["b"], "a final job, failed or not, closes its file")
    }

    @Test func aSuspendedPipelineStartsNothingButLetsRunningAttemptsFinish() {
        let pipelines = [PipelineDefinition(name: "p", maxConcurrent: 1)]
        var driver = SchedulerDriver(
            [planJob("a", pipeline: "p"), planJob("b", pipeline: "p")], pipelines: pipelines)
        driver.send(.suspensions(["p": 1]))
        #expect(driver.events == ["suspended p"])
        driver.succeed("a")
        #expect(driver.state("a") == .succeeded)
        #expect(driver.started.isEmpty)
    }

    @Test func suspensionIsNestedAndResumesAtZero() {
        var driver = SchedulerDriver([planJob("a")], suspended: ["default": 2])
        #expect(driver.started.isEmpty)
        driver.send(.suspensions(["default": 1]))
        #expect(driver.events.isEmpty && driver.started.isEmpty, "one resume of two suspends")
        driver.send(.suspensions(["default": 0]))
        #expect(driver.events.prefix(1) == ["resumed default"])
        #expect(driver.started == ["a"])
    }
}

@Suite struct SchedulerRetryTests {
    @Test func exponentialBackoffWaitsOnTheClockThenStartsTheNextAttempt() {
        var driver = SchedulerDriver([planJob("a", retry: noJitter)])
        driver.fail("a")
        #expect(driver.events == ["failed a", "retrying a", "waiting a"])
        #expect(driver.reason("a") == .waiting(.backoff))
        #expect(driver.scheduler.nextWakeDate == driver.now.addingTimeInterval(2))
        driver.advance(1.9)
        #expect(driver.started.isEmpty)
        driver.advance(0.1)
        #expect(driver.started == ["a"])
        driver.fail("a")
        #expect(driver.scheduler.nextWakeDate == driver.now.addingTimeInterval(6), "2 s × factor 3")
    }

    @Test func jitterComesFromTheInjectedSource() {
        let policy = RetryPolicy(attempts: 3, delay: .seconds(10), jitter: 0.5)
        var driver = SchedulerDriver([planJob("a", retry: policy)], seed: 42)
        driver.fail("a")
        var expected = SeededRandomSource(seed: 42)
        let delay = policy.delay(afterAttempt: 1, random: &expected)
        #expect(driver.last.events.first { $0.kind == .retrying }?.delay == delay)
        #expect(delay != .seconds(10), "jitter moved it")
    }

    @Test func exhaustedAttemptsFailTheJob() {
        var driver = SchedulerDriver([planJob("a", retry: RetryPolicy(attempts: 2, backoff: .none))])
        driver.fail("a")
        #expect(driver.started == ["a"], "no delay: at once")
        driver.fail("a", exitCode: 3)
        #expect(driver.state("a") == .failed)
        #expect(driver.reason("a") == .ended(.exit(3)))
    }

    @Test func maxElapsedStopsRetriesThatWouldStartTooLate() {
        var policy = noJitter
        policy.maxElapsed = .seconds(5)
        var driver = SchedulerDriver([planJob("a", retry: policy)])
        driver.advance(4)
        driver.fail("a")
        #expect(driver.state("a") == .failed, "4 s + a 2 s delay passes 5 s since the first start")
    }

    @Test func retryAfterReplacesTheBackoff() {
        var driver = SchedulerDriver([planJob("a", retry: noJitter)])
        driver.end("a", AttemptResult(.exited(1), retryAfter: .seconds(90)))
        #expect(driver.scheduler.nextWakeDate == driver.now.addingTimeInterval(90))
    }

    @Test func retryOnLimitsWhichExitCodesRetry() {
        var policy = noJitter
        policy.retryOn = [3]
        var driver = SchedulerDriver([planJob("a", retry: policy), planJob("b", retry: policy)])
        driver.fail("a", exitCode: 3)
        #expect(driver.state("a") == .waiting)
        driver.fail("b", exitCode: 4)
        #expect(driver.state("b") == .failed)
    }

    @Test func exit75AlwaysRetriesWhateverRetryOnSays() {
        var policy = noJitter
        policy.retryOn = [3]
        var driver = SchedulerDriver([planJob("a", retry: policy)])
        driver.end("a", AttemptResult(.exited(75)))
        #expect(driver.reason("a") == .waiting(.backoff))
    }

    @Test func aPluginsRetryCountsAsExit75() {
        var policy = noJitter
        policy.retryOn = [3]
        var driver = SchedulerDriver([planJob("a", retry: policy)])
        driver.end("a", AttemptResult(.pluginRetry("rate limited")))
        #expect(driver.reason("a") == .waiting(.backoff))
    }

    @Test func aTimeoutIsNotAnExitCodeThatRetryOnLists() {
        var policy = noJitter
        policy.retryOn = [1]
        var driver = SchedulerDriver([planJob("a", retry: policy)])
        driver.end("a", AttemptResult(.timedOut(after: .seconds(30))))
        #expect(driver.reason("a") == .ended(.timeout(after: .seconds(30))))
    }
}

@Suite struct SchedulerConnectivityTests {
    @Test func offlineJobsWaitForTheInternetUsingNoAttempt() {
        var driver = SchedulerDriver(
            [planJob("fetch", internet: true), planJob("local")], inputs: [.connectivity(online: false)])
        #expect(driver.started == ["local"])
        #expect(driver.reason("fetch") == .waiting(.internet))
        #expect(driver.scheduler.record("fetch")?.attempts == 0)
        driver.send(.connectivity(online: true))
        #expect(driver.started == ["fetch"])
    }

    @Test func aFailureWhileOfflineGoesBackToWaitingUncounted() {
        var driver = SchedulerDriver([planJob("fetch", internet: true)])
        driver.send(.connectivity(online: false))
        driver.fail("fetch", exitCode: 6)
        #expect(driver.reason("fetch") == .waiting(.internet))
        #expect(driver.scheduler.record("fetch")?.countedAttempts == 0)
        driver.send(.connectivity(online: true))
        #expect(driver.orders.map(\.attempt) == [2])
    }

    @Test func aPipelineThatNeedsTheInternetIsSuspendedWhileOffline() {
        let pipelines = [PipelineDefinition(name: "net", requiresInternet: true)]
        var driver = SchedulerDriver([planJob("up", pipeline: "net", internet: true)], pipelines: pipelines)
        driver.succeed("up")
        driver.send(.connectivity(online: false))
        #expect(driver.events == ["suspended net"])
        driver.send(.connectivity(online: true))
        #expect(driver.events == ["resumed net"])
    }
}

@Suite struct SchedulerConstraintTests {
    @Test func constraintsAreCheckedBeforeAnAttemptExists() {
        var driver = SchedulerDriver([planJob("a", constraints: ["token"])])
        #expect(
            driver.last.effects.contains(.checkConstraints(runID: "R", jobID: "a", constraints: ["token"])))
        #expect(driver.started.isEmpty)
        driver.send(.constraintsChecked(jobID: "a", failed: nil))
        #expect(driver.started == ["a"])
    }

    @Test func oneSatisfyServesEveryWaitingJob() {
        var driver = SchedulerDriver([
            planJob("a", constraints: ["token"]), planJob("b", constraints: ["token"]),
        ])
        driver.send(.constraintsChecked(jobID: "a", failed: "token"))
        #expect(driver.last.effects.contains(.satisfy(runID: "R", constraint: "token")))
        driver.send(.constraintsChecked(jobID: "b", failed: "token"))
        #expect(
            !driver.last.effects.contains(.satisfy(runID: "R", constraint: "token")), "one satisfy at a time")
        #expect(driver.reason("b") == .waiting(.constraint("token")))
        driver.send(.satisfyEnded(constraint: "token", .satisfied))
        #expect(driver.started == ["a", "b"], "no second check after satisfy")
    }

    @Test func aFailedSatisfyFailsEachWaitingAttempt() {
        let retry = RetryPolicy(attempts: 1)
        var driver = SchedulerDriver([planJob("a", constraints: ["vault"], retry: retry)])
        driver.send(.constraintsChecked(jobID: "a", failed: "vault"))
        driver.send(.satisfyEnded(constraint: "vault", .failed(lastLine: "sealed")))
        #expect(driver.state("a") == .failed)
        #expect(driver.reason("a") == .ended(.constraintFailed(constraint: "vault", lastLine: "sealed")))
        #expect(driver.scheduler.record("a")?.attempts == 1)
    }

    @Test func aSatisfyEndedByTheStopLeavesItsJobsWaitingUncounted() {
        let retry = RetryPolicy(attempts: 3)
        var driver = SchedulerDriver([
            planJob("a", constraints: ["token"], retry: retry), planJob("b", constraints: ["token"]),
        ])
        driver.send(.constraintsChecked(jobID: "a", failed: "token"))
        driver.send(.constraintsChecked(jobID: "b", failed: "token"))
        driver.send(.stop)
        // The stop ends the satisfy's process, which reports like any other failure.
        driver.send(.satisfyEnded(constraint: "token", .failed(lastLine: "the runner stopped")))
        #expect(driver.events.isEmpty, "no failed or retrying events")
        for id in ["a", "b"] {
            #expect(driver.reason(id) == .waiting(.constraint("token")))
            #expect(driver.scheduler.record(id)?.attempts == 0)
        }
        #expect(driver.scheduler.isIdle)
        var scheduler = driver.scheduler
        _ = scheduler.close(now: driver.now)
        #expect(scheduler.run.state == .stopped, "the next runner resumes it and satisfies again")
    }

    @Test func aCheckThatFailsAfterTheStopStartsNoSatisfy() {
        var driver = SchedulerDriver([planJob("a", constraints: ["token"])])
        driver.send(.stop)
        driver.send(.constraintsChecked(jobID: "a", failed: "token"))
        #expect(!driver.last.effects.contains(.satisfy(runID: "R", constraint: "token")))
        #expect(driver.reason("a") == .waiting(.constraint("token")))
        #expect(driver.scheduler.isIdle)
    }
}

@Suite struct SchedulerOperatorTests {
    @Test func cancelOfAWaitingJobBlocksItsDependents() {
        var driver = SchedulerDriver([planJob("a"), planJob("b", needs: ["a"]), planJob("c", needs: ["b"])])
        #expect(driver.request(.cancel, "b") == .applied("b cancelled"))
        #expect(driver.reason("b") == .ended(.cancelledByOperator))
        #expect(driver.reason("c") == .ended(.blockedBy("b")))
    }

    @Test func cancelOfARunningJobEndsItsAttemptFirst() {
        var driver = SchedulerDriver([planJob("a"), planJob("b", needs: ["a"])])
        driver.send(.attemptSpawned(jobID: "a", attempt: 1, pid: 99, pidStartTime: nil))
        #expect(driver.request(.cancel, "a") == .terminating(jobID: "a"))
        #expect(
            driver.last.effects.contains(
                .endAttempt(runID: "R", jobID: "a", attempt: 1, pid: 99, pidStartTime: nil)))
        driver.end("a", AttemptResult(.interrupted(.runnerStopped)))
        #expect(driver.state("a") == .cancelled)
        #expect(driver.state("b") == .blocked)
    }

    @Test func skipOfARunningJobLetsDependentsGoOn() {
        var driver = SchedulerDriver([planJob("a"), planJob("b", needs: ["a"])])
        _ = driver.request(.skip, "a")
        driver.end("a", .failed(exitCode: 143))
        #expect(driver.reason("a") == .ended(.skippedByOperator))
        #expect(driver.started == ["b"])
    }

    @Test func anAttemptThatSucceedsBeforeItsSkipLandsStaysSucceeded() {
        var driver = SchedulerDriver([planJob("a")])
        _ = driver.request(.skip, "a")
        driver.succeed("a")
        #expect(driver.state("a") == .succeeded)
    }

    @Test func skipOfAFailedJobReopensTheJobsItBlocked() {
        var driver = SchedulerDriver([planJob("a"), planJob("b", needs: ["a"])])
        driver.fail("a")
        #expect(driver.request(.skip, "a") == .applied("a skipped; the jobs it blocked may go on"))
        #expect(driver.started == ["b"])
    }

    @Test func retryGivesAFailedJobAFreshBudgetAndReopensWhatItBlocked() {
        var driver = SchedulerDriver([planJob("a"), planJob("b", needs: ["a"])])
        driver.fail("a")
        _ = driver.request(.retry, "a")
        #expect(driver.started == ["a"])
        #expect(driver.state("b") == .pending)
        #expect(driver.orders.first?.attempt == 2)
        driver.succeed("a")
        #expect(driver.started == ["b"])
    }

    @Test func retryOfAJobStillBlockedNamesTheNeedInTheWay() {
        var driver = SchedulerDriver([planJob("a"), planJob("b", needs: ["a"])])
        driver.fail("a")
        #expect(
            driver.request(.retry, "b") == .refused("b is blocked by a, which failed; retry a instead"))
        #expect(driver.state("b") == .blocked)
    }

    @Test func retryOfASucceededJobIsRefused() {
        var driver = SchedulerDriver([planJob("a")])
        driver.succeed("a")
        #expect(
            driver.request(.retry, "a")
                == .refused("a succeeded; only a failed, blocked or cancelled job can be retried"))
        #expect(driver.request(.skip, "zz", requestID: 2) == .refused("run R has no job 'zz'"))
    }

    @Test func aRequestIsAppliedOnceAndAStoredOneIsDeleted() {
        var driver = SchedulerDriver([planJob("a"), planJob("b")])
        _ = driver.request(.cancel, "b", requestID: 7, stored: true)
        #expect(driver.last.changes.contains(.deleteRequest(runID: "R", id: 7)))
        #expect(
            driver.request(.cancel, "b", requestID: 7, stored: true) == nil, "seen before: not applied again")
    }

    @Test func aRetryReopensAFinishedRun() {
        var driver = SchedulerDriver([planJob("a")])
        driver.fail("a")
        var scheduler = driver.scheduler
        _ = scheduler.close(now: driver.now)
        _ = scheduler.handle(.stop, now: driver.now)
        let decision = scheduler.handle(
            .operatorRequests(
                [OperatorRequest(id: 1, kind: .retry, jobID: "a", requestedAt: driver.now)], stored: false),
            now: driver.now)
        #expect(scheduler.run.state == .stopped)
        #expect(decision.changes.contains { if case .putRun = $0 { true } else { false } })
        #expect(
            decision.effects.allSatisfy { if case .startAttempt = $0 { false } else { true } },
            "stopped: nothing starts")
    }
}

@Suite struct SchedulerRecoveryTests {
    /// A run as a dead runner left it: `busy` running its attempt `attempts`.
    func crashed(crashedInARow: Int = 0, attempts: Int = 1, inRunner: Bool = false) -> (Scheduler, Decision) {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let run = RunRecord(
            id: "R", state: .running, startedAt: start, jobIDs: ["busy", "after"], runnerPID: 9)
        let busy = JobRecord(
            jobID: "busy", pipeline: "default", maxAttempts: 1, state: .running, attempts: attempts,
            crashedInARow: crashedInARow, startedAt: start)
        let snapshot = RunSnapshot(
            run: run,
            jobs: ["busy": busy, "after": JobRecord(jobID: "after", pipeline: "default", needs: ["busy"])],
            attempts: ["busy": [AttemptRecord(jobID: "busy", number: attempts, startedAt: start, pid: 31337)]]
        )
        return Scheduler.resume(
            snapshot,
            plan: RunPlan(
                jobs: [planJob("busy", inRunner: inRunner), planJob("after", needs: ["busy"])], pipelines: []),
            runnerPID: 10, suspended: [:], pendingRequests: [], options: SchedulerOptions(logDirectory: "/l"),
            random: SeededRandomSource(seed: 1), now: start.addingTimeInterval(60))
    }

    @Test func anAttemptADeadRunnerLeftIsInterruptedAndStartsAgainUncounted() {
        let (scheduler, decision) = crashed()
        #expect(decision.events.map(\.kind).prefix(1) == [.interrupted])
        #expect(scheduler.record("busy")?.uncountedAttempts == 1)
        let orders = decision.effects.compactMap {
            if case .startAttempt(let order) = $0 { order } else { nil }
        }
        #expect(orders.map(\.attempt) == [2], "retry.attempts 1 is not used up by the runner's death")
        #expect(scheduler.run.runnerPID == 10)
    }

    /// A need that failed is now `allowFailure` in the job files, and comes after the job that
    /// needs it in load order: read afresh on resume (SPEC 5.9), it satisfies that job, which
    /// starts. (Definitions were once put into the records one by one in load order, so the
    /// job's count of unmet needs was taken from the need's stored `allowFailure`, and the job
    /// never started.)
    @Test func aNeedNowAllowedToFailSatisfiesAJobBeforeItInLoadOrder() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let run = RunRecord(
            id: "R", state: .running, startedAt: start, jobIDs: ["report", "flaky"], runnerPID: 9)
        let snapshot = RunSnapshot(
            run: run,
            jobs: [
                "report": JobRecord(jobID: "report", pipeline: "default", needs: ["flaky"]),
                "flaky": JobRecord(
                    jobID: "flaky", pipeline: "default", state: .failed, reason: .ended(.exit(1)),
                    attempts: 1,
                    exitCode: 1),
            ])
        let (scheduler, decision) = Scheduler.resume(
            snapshot,
            plan: RunPlan(
                jobs: [
                    planJob("report", needs: ["flaky"]),
                    RunPlan.Job(id: "flaky", allowFailure: true),
                ], pipelines: []),
            runnerPID: 10, suspended: [:], pendingRequests: [], options: SchedulerOptions(logDirectory: "/l"),
            random: SeededRandomSource(seed: 1), now: start.addingTimeInterval(60))
        let started = decision.effects.compactMap {
            if case .startAttempt(let order) = $0 { order.jobID } else { nil }
        }
        #expect(started == ["report"])
        #expect(scheduler.record("flaky")?.isAllowedFailure == true)
    }

    @Test func theCrashLoopLimitFailsAJobThatRunsInsideTheRunner() {
        let (scheduler, _) = crashed(crashedInARow: Scheduler.crashLoopLimit - 1, attempts: 3, inRunner: true)
        #expect(scheduler.record("busy")?.reason == .ended(.crashedTheRunner))
        #expect(scheduler.record("after")?.state == .blocked)
    }

    @Test func aJobOutsideTheRunnerIsNeverBlamedForItsDeath() {
        let (scheduler, _) = crashed(crashedInARow: Scheduler.crashLoopLimit - 1, attempts: 3)
        #expect(scheduler.record("busy")?.state == .running, "started again")
        #expect(scheduler.record("busy")?.crashedInARow == Scheduler.crashLoopLimit - 1)
    }

    @Test func aCleanStopInterruptsWithoutSpendingAttemptsAndStartsNothing() {
        var driver = SchedulerDriver([planJob("a"), planJob("b"), planJob("c")], maxRunning: 2)
        driver.send(.stop)
        driver.end("a", AttemptResult(.interrupted(.runnerStopped)))
        #expect(driver.reason("a") == .waiting(.interrupted))
        #expect(driver.scheduler.record("a")?.countedAttempts == 0)
        #expect(driver.started.isEmpty, "a slot came free, but the runner is stopping")
        #expect(driver.scheduler.nextWakeDate == nil)
    }

    @Test func theOfflineOperatorEndsARunningJobWhoseRunnerIsGone() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let snapshot = RunSnapshot(
            run: RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["busy"], runnerPID: 9),
            jobs: ["busy": JobRecord(jobID: "busy", pipeline: "default", state: .running, attempts: 1)],
            attempts: ["busy": [AttemptRecord(jobID: "busy", number: 1, startedAt: start, pid: 31337)]])
        let (result, decision) = OfflineOperator.apply(
            OperatorRequest(id: 1, kind: .cancel, jobID: "busy", requestedAt: start), to: snapshot, now: start
        )
        #expect(result == .applied("busy cancelled"))
        #expect(
            decision.effects.contains(
                .endAttempt(runID: "R", jobID: "busy", attempt: 1, pid: 31337, pidStartTime: nil)))
        let attempt = decision.changes.compactMap { if case .putAttempt(_, let a) = $0 { a } else { nil } }
            .last
        #expect(attempt?.outcome == .interrupted)
    }
}
