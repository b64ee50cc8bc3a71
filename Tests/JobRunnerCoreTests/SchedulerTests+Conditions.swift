import Foundation
import JobRunnerCore
import Testing

/// `allowFailure` and `when: success | failure | always` (SPEC 3).
@Suite struct SchedulerConditionTests {
    private func job(
        _ id: String, needs: [String] = [], allowFailure: Bool = false, when: RunCondition = .success
    ) -> RunPlan.Job {
        RunPlan.Job(id: id, needs: needs, allowFailure: allowFailure, when: when)
    }

    private func closedState(_ driver: inout SchedulerDriver) -> RunState {
        var scheduler = driver.scheduler
        _ = scheduler.close(now: driver.now)
        return scheduler.run.state
    }

    @Test func anAllowedFailureLetsDependentsRunAndDoesNotFailTheRun() {
        var driver = SchedulerDriver([job("lint", allowFailure: true), job("build", needs: ["lint"])])
        driver.fail("lint", exitCode: 3)
        #expect(driver.state("lint") == .failed)
        #expect(driver.scheduler.record("lint")?.isAllowedFailure == true)
        #expect(driver.started == ["build"])
        driver.succeed("build")
        #expect(closedState(&driver) == .succeeded)
        #expect(driver.scheduler.troubledJobs.map(\.jobID) == ["lint"])
    }

    @Test func aFailureWithoutAllowFailureStillFailsTheRun() {
        var driver = SchedulerDriver([job("lint")])
        driver.fail("lint")
        #expect(closedState(&driver) == .failed)
    }

    @Test func aWhenFailureJobRunsWhenANeedFails() {
        var driver = SchedulerDriver([
            job("test"), job("deploy", needs: ["test"]), job("notify", needs: ["deploy"], when: .failure),
        ])
        driver.fail("test")
        #expect(driver.state("deploy") == .blocked)
        #expect(driver.started == ["notify"])
        driver.succeed("notify")
        #expect(driver.state("notify") == .succeeded)
        #expect(closedState(&driver) == .failed)
    }

    @Test func aWhenFailureJobIsSkippedWithItsReasonWhenEveryNeedSucceeds() {
        var driver = SchedulerDriver([
            job("test"), job("notify", needs: ["test"], when: .failure), job("after", needs: ["notify"]),
        ])
        driver.succeed("test")
        #expect(driver.state("notify") == .skipped)
        #expect(driver.reason("notify") == .ended(.noNeedFailed))
        #expect(driver.events.contains("skipped notify"))
        #expect(driver.started == ["after"], "a skipped job satisfies the jobs that need it")
        #expect(JobReason(words: EndReason.noNeedFailed.words, state: .skipped) == .ended(.noNeedFailed))
    }

    @Test func anAllowedFailureDoesNotWakeAWhenFailureJob() {
        var driver = SchedulerDriver([
            job("lint", allowFailure: true), job("notify", needs: ["lint"], when: .failure),
        ])
        driver.fail("lint")
        #expect(driver.state("notify") == .skipped)
    }

    @Test func aWhenAlwaysJobRunsAfterFailureBlockOrSuccessAndIsNeverBlocked() {
        var driver = SchedulerDriver([
            job("a"), job("b", needs: ["a"]), job("c"), job("cleanup", needs: ["b", "c"], when: .always),
        ])
        driver.fail("a")
        #expect(driver.state("b") == .blocked)
        #expect(driver.started.isEmpty, "c has not ended yet")
        driver.succeed("c")
        #expect(driver.started == ["cleanup"])

        var succeeding = SchedulerDriver([job("a"), job("cleanup", needs: ["a"], when: .always)])
        succeeding.succeed("a")
        #expect(succeeding.started == ["cleanup"])
    }

    @Test func aCancelledNeedWakesAWhenFailureJob() {
        var driver = SchedulerDriver([job("a"), job("notify", needs: ["a"], when: .failure)])
        _ = driver.request(.cancel, "a")
        driver.end("a", AttemptResult(.interrupted(.runnerStopped)))
        #expect(driver.state("a") == .cancelled)
        #expect(driver.started == ["notify"])
    }

    @Test func aResumedRunKeepsTheConditions() {
        var driver = SchedulerDriver([job("a"), job("notify", needs: ["a"], when: .failure)])
        driver.fail("a")
        let records = ["a", "notify"].compactMap { driver.scheduler.record($0) }
        #expect(records.last?.when == .failure)
        // The stored plan alone (an operator command with no job files) knows the condition.
        var run = driver.scheduler.run
        run.state = .stopped
        let snapshot = RunSnapshot(
            run: run, jobs: Dictionary(uniqueKeysWithValues: records.map { ($0.jobID, $0) }))
        #expect(RunPlan(stored: snapshot).job("notify")?.when == .failure)
    }
}

/// A run that only a suspended pipeline holds back says so (issue 12, item 8).
@Suite struct SchedulerStallTests {
    @Test func aRunHeldBackBySuspensionSaysSoAtOnceAndEveryThirtySeconds() {
        let ci = PipelineDefinition(name: "ci")
        var driver = SchedulerDriver(
            [planJob("a", pipeline: "ci"), planJob("b", pipeline: "ci")], pipelines: [ci],
            suspended: ["ci": 1])
        #expect(driver.events.contains("waiting ci"))
        #expect(driver.last.events.first { $0.kind == .waiting }?.reason == "suspended")
        #expect(driver.scheduler.nextWakeDate == driver.now.addingTimeInterval(30))
        driver.advance(29)
        #expect(!driver.events.contains("waiting ci"))
        driver.advance(1)
        #expect(driver.events.contains("waiting ci"))
        driver.send(.suspensions(["ci": 0]))
        #expect(driver.started == ["a", "b"])
        #expect(driver.scheduler.nextWakeDate == nil)
    }

    /// A pipeline suspended before the run opened is announced `suspended` in the opening, so
    /// that its `resumed` follows a `suspended`; an unused suspended pipeline is not named.
    @Test func aPipelineSuspendedBeforeTheRunIsAnnouncedBeforeItsResume() {
        let ci = PipelineDefinition(name: "ci")
        var driver = SchedulerDriver(
            [planJob("a", pipeline: "ci"), planJob("b")], pipelines: [ci, PipelineDefinition(name: "idle")],
            suspended: ["ci": 1, "idle": 1])
        #expect(driver.events.contains("suspended ci"))
        #expect(!driver.events.contains("suspended idle"))
        driver.send(.suspensions(["ci": 0, "idle": 1]))
        #expect(driver.events.contains("resumed ci"))
    }

    @Test func aRunWithOtherWorkSaysNothing() {
        let ci = PipelineDefinition(name: "ci")
        let driver = SchedulerDriver(
            [planJob("a", pipeline: "ci"), planJob("b")], pipelines: [ci], suspended: ["ci": 1])
        #expect(driver.started == ["b"])
        #expect(!driver.events.contains("waiting ci"))
    }
}

extension SchedulerConditionTests {
    @Test func aRetriedNeedHoldsBackAnAlwaysJobThatHasNotStartedAgain() {
        var driver = SchedulerDriver(
            [
                RunPlan.Job(id: "a"), RunPlan.Job(id: "b"),
                RunPlan.Job(id: "cleanup", needs: ["a", "b"], when: .always),
            ])
        driver.fail("a")
        #expect(driver.started.isEmpty, "cleanup still waits for b")
        _ = driver.request(.retry, "a")
        #expect(driver.started == ["a"])
        driver.succeed("b")
        #expect(driver.started.isEmpty, "a runs again: cleanup waits for it")
        driver.succeed("a")
        #expect(driver.started == ["cleanup"])
    }

    /// The reproduction: `a` fails, `b` needs `a`, `report` (`when: always`) needs `b`;
    /// after `retry a`, `report` kept its first result (`wheel: none`) and `retry report` was
    /// refused. Now a `when: always|failure` job is judged again once the needs that `retry` or
    /// `skip` reopened are final.
    @Test func aWhenAlwaysJobIsJudgedAgainWhenRetryReopensItsNeeds() {
        var driver = SchedulerDriver([
            job("a"), job("b", needs: ["a"]), job("report", needs: ["b"], when: .always),
        ])
        driver.fail("a")
        #expect(driver.state("b") == .blocked)
        #expect(driver.started == ["report"])
        driver.succeed("report")
        #expect(closedState(&driver) == .failed)

        _ = driver.request(.retry, "a")
        #expect(driver.started == ["a"])
        #expect(driver.state("report") == .pending, "waits for its needs again")
        driver.succeed("a")
        #expect(driver.started == ["b"])
        driver.succeed("b")
        #expect(driver.started == ["report"], "run again, with the needs' new results")
        driver.succeed("report")
        #expect(closedState(&driver) == .succeeded)
    }

    @Test func aWhenFailureJobIsJudgedAgainWhenSkipReopensItsNeeds() {
        var driver = SchedulerDriver([
            job("a"), job("b", needs: ["a"]), job("alert", needs: ["b"], when: .failure),
        ])
        driver.fail("a")
        #expect(driver.started == ["alert"])
        driver.succeed("alert")
        _ = driver.request(.skip, "a")
        #expect(driver.started == ["b"])
        #expect(driver.state("alert") == .pending)
        driver.succeed("b")
        #expect(driver.state("alert") == .skipped, "no need failed this time")
    }
}
