import Foundation
import JobRunnerCore
import Testing

/// A failed attempt of a job that needs the internet is judged on a fresh probe (SPEC 5.5):
/// the last periodic answer may be up to an interval old.
@Suite struct SchedulerInternetFailureTests {
    private func probes(_ decision: Decision) -> Int {
        decision.effects.filter { $0 == .probeConnectivity }.count
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
        driver.send(.connectivity(online: false))
        #expect(driver.reason("fetch") == .waiting(.internet))
        #expect(driver.scheduler.record("fetch")?.countedAttempts == 0)
        #expect(driver.started.isEmpty)
        driver.send(.connectivity(online: true))
        #expect(driver.orders.map(\.attempt) == [2], "runs again once the probe succeeds")
    }

    @Test func onlineAfterTheFailureCountsItAsUsual() {
        var driver = SchedulerDriver([planJob("fetch", internet: true)])
        driver.fail("fetch", exitCode: 3)
        driver.send(.connectivity(online: true))
        #expect(driver.reason("fetch") == .ended(.exit(3)))
    }

    @Test func failuresTogetherAskOneProbeAndAreAllJudgedOnItsAnswer() {
        var driver = SchedulerDriver([planJob("a", internet: true), planJob("b", internet: true)])
        driver.fail("a")
        #expect(probes(driver.last) == 1)
        driver.fail("b")
        #expect(probes(driver.last) == 0, "one probe is already asked")
        driver.send(.connectivity(online: false))
        #expect(driver.reason("a") == .waiting(.internet))
        #expect(driver.reason("b") == .waiting(.internet))
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
        driver.send(.connectivity(online: true))
        #expect(driver.reason("fetch") == .ended(.exit(1)))
    }
}
