import Foundation
import JobRunnerCore
import Testing

/// A failed attempt of a job that needs the internet is judged on a fresh probe (SPEC 5.5):
/// the last periodic answer may be up to an interval old.
@Suite struct SchedulerInternetFailureTests {
    private func probes(_ decision: Decision) -> Int {
        decision.effects.filter { if case .probeConnectivity = $0 { true } else { false } }.count
    }

    @Test func aFailureWhileThoughtOnlineAsksTheProbeBeforeItCounts() {
        var driver = SchedulerDriver([planJob("fetch", internet: true)])
        driver.fail("fetch", exitCode: 1)
        #expect(probes(driver.last) == 1)
        #expect(driver.state("fetch") == .running, "not judged before the probe answers")
        #expect(driver.last.changes.isEmpty)
        #expect(!driver.scheduler.isIdle, "the run does not end while the answer is awaited")
    }

    @Test func offlineAfterTheFailureSendsTheAttemptBackToWaitingUncounted() {
        var driver = SchedulerDriver([planJob("fetch", internet: true)])
        driver.fail("fetch", exitCode: 1)
        driver.send(.probed(online: false))
        #expect(driver.reason("fetch") == .waiting(.internet))
        #expect(driver.scheduler.record("fetch")?.countedAttempts == 0)
        #expect(driver.started.isEmpty)
        driver.send(.connectivity(online: true))
        #expect(driver.orders.map(\.attempt) == [2], "runs again once the probe succeeds")
    }

    @Test func onlineAfterTheFailureCountsItAsUsual() {
        var driver = SchedulerDriver([planJob("fetch", internet: true)])
        driver.fail("fetch", exitCode: 3)
        driver.send(.probed(online: true))
        #expect(driver.reason("fetch") == .ended(.exit(3)))
    }

    @Test func failuresTogetherAskOneProbeAndAreAllJudgedOnItsAnswer() {
        var driver = SchedulerDriver([planJob("a", internet: true), planJob("b", internet: true)])
        driver.fail("a")
        #expect(driver.last.effects.contains(.probeConnectivity(runID: "R")), "the answer goes to this run")
        driver.fail("b")
        #expect(probes(driver.last) == 0, "one probe is already asked")
        driver.send(.probed(online: false))
        #expect(driver.reason("a") == .waiting(.internet))
        // b failed after the probe was asked: a second probe, started after b's failure, judges it.
        #expect(driver.state("b") == .running)
        #expect(probes(driver.last) == 1)
        driver.send(.probed(online: false))
        #expect(driver.reason("b") == .waiting(.internet))
    }

    /// A periodic answer may come from a probe that started before the failure (a loaded machine
    /// makes a probe slow): it judges no failure, only the probe asked after it does. The job
    /// itself took the machine offline here; a periodic "online" once counted its failure.
    @Test func aPeriodicAnswerJudgesNoHeldFailure() {
        var driver = SchedulerDriver([planJob("fetch", internet: true)])
        driver.fail("fetch", exitCode: 1)
        driver.send(.connectivity(online: true))
        #expect(driver.state("fetch") == .running, "still held for the probe asked after the failure")
        driver.send(.probed(online: false))
        #expect(driver.reason("fetch") == .waiting(.internet))
        #expect(driver.scheduler.record("fetch")?.countedAttempts == 0)
    }

    @Test func aJobThatDoesNotNeedTheInternetIsJudgedAtOnce() {
        var driver = SchedulerDriver([planJob("local")])
        driver.fail("local")
        #expect(probes(driver.last) == 0)
        #expect(driver.state("local") == .failed)
    }

    @Test func aStopJudgesHeldFailuresOnWhatIsKnown() {
        var driver = SchedulerDriver([planJob("fetch", internet: true)])
        driver.fail("fetch", exitCode: 1)
        driver.send(.stop)
        #expect(driver.state("fetch") == .failed)
        #expect(driver.scheduler.isIdle)
    }

    @Test func aRepeatedEndOfAHeldAttemptIsIgnored() {
        var driver = SchedulerDriver([planJob("fetch", internet: true)])
        driver.fail("fetch", exitCode: 1)
        driver.fail("fetch", exitCode: 2)
        #expect(driver.last.isEmpty)
        driver.send(.probed(online: true))
        #expect(driver.reason("fetch") == .ended(.exit(1)))
    }
}
