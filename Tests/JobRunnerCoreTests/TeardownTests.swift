import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

/// The one deadline policy of attempts: a deadline from the work's start, the first of three
/// ends, and the one reason for each; stepped on a hand-moved clock.
@Suite struct TeardownTests {
    static func job(timeout: Duration?, killGrace: Duration = .seconds(2)) -> JobDefinition {
        JobDefinition(
            id: "j", handler: .shell("true"), pipeline: "p", timeout: timeout, killGrace: killGrace)
    }

    @Test func aJobsPolicyIsItsTimeoutAndGraceAndItsDeadlineCountsFromTheStart() throws {
        let policy = Teardown(job: Self.job(timeout: .seconds(30), killGrace: .seconds(2)))
        #expect(policy == Teardown(timeout: .seconds(30), killGrace: .seconds(2)))
        let start = Date(timeIntervalSince1970: 1_000)
        let deadline = try #require(policy.deadline(from: start))
        #expect(deadline.date == start.addingTimeInterval(30))
        #expect(deadline.timeout == .seconds(30))
        #expect(Teardown(job: Self.job(timeout: nil)).deadline(from: start) == nil)
    }

    @Test func everyStopHasOneEnd() {
        #expect(Teardown.Stop.timedOut(after: .seconds(2)).end == .timedOut(after: .seconds(2)))
        #expect(Teardown.Stop.timedOut(after: .seconds(2)).end.words == "timeout after 2s")
        #expect(Teardown.Stop.interrupted.end == .interrupted(.runnerStopped))
        #expect(Teardown.Stop.interrupted.end.words == "the runner stopped")
    }

    @Test func workThatEndsBeforeItsDeadlineFinishesAndItsTimerGoes() async {
        let clock = ManualClock()
        let watch = AttemptWatch<Int>()
        watch.arm(Teardown(timeout: .seconds(10)).deadline(from: clock.now()), clock: clock)
        await clock.waitForSleepers()
        watch.finish(7, at: clock.now().addingTimeInterval(9))
        guard case .finished(7) = await watch.end else {
            Issue.record("expected finished(7), got \(await watch.end)")
            return
        }
        clock.advance(by: 20)
        guard case .finished(7) = await watch.end else {
            Issue.record("a later deadline changed the end")
            return
        }
    }

    @Test func theDeadlineComesFirstAndLaterEndsChangeNothing() async {
        let clock = ManualClock()
        let watch = AttemptWatch<Int>()
        watch.arm(Teardown(timeout: .seconds(10)).deadline(from: clock.now()), clock: clock)
        await clock.waitForSleepers()
        clock.advance(by: 10)
        #expect(await Self.stop(watch) == .timedOut(after: .seconds(10)))
        watch.finish(1, at: nil)
        watch.interrupt()
        #expect(await Self.stop(watch) == .timedOut(after: .seconds(10)))
    }

    /// A busy runner can see the work's end before its own timer fires, after the deadline: the
    /// work still overran its timeout, whichever was handled first.
    @Test func workThatEndsAtOrAfterItsDeadlineTimedOut() async {
        let clock = ManualClock()
        for late in [0.0, 30.0] {
            let watch = AttemptWatch<Int>()
            watch.arm(Teardown(timeout: .seconds(5)).deadline(from: clock.now()), clock: clock)
            watch.finish(0, at: clock.now().addingTimeInterval(5 + late))
            #expect(await Self.stop(watch) == .timedOut(after: .seconds(5)))
        }
        // When its end was not seen early, or there is no deadline, it finished.
        let unknown = AttemptWatch<Int>()
        unknown.arm(Teardown(timeout: .seconds(5)).deadline(from: clock.now()), clock: clock)
        unknown.finish(3, at: nil)
        #expect(await Self.stop(unknown) == nil)
        let unlimited = AttemptWatch<Int>()
        unlimited.arm(nil, clock: clock)
        unlimited.finish(3, at: clock.now().addingTimeInterval(1e6))
        #expect(await Self.stop(unlimited) == nil)
    }

    @Test func aStopComesFirst() async {
        let clock = ManualClock()
        let watch = AttemptWatch<Int>()
        watch.arm(Teardown(timeout: .seconds(10)).deadline(from: clock.now()), clock: clock)
        watch.interrupt()
        #expect(await Self.stop(watch) == .interrupted)
        clock.advance(by: 10)
        #expect(await Self.stop(watch) == .interrupted)
        #expect(clock.sleeperDeadlines.isEmpty, "the stop cancelled the timer")
    }

    /// Work on threads of its own hears of its end once, whether it came before or after.
    @Test func anObserverHearsTheEndOnce() async {
        let heard = Locked<[String]>([])
        let watch = AttemptWatch<AttemptResult>()
        watch.onEnd { end in heard.withLock { $0.append(end.result.end.words) } }
        watch.finish(.failed(exitCode: 2), at: nil)
        watch.interrupt()
        #expect(heard.withLock { $0 } == ["exit:2"])
        let ended = AttemptWatch<AttemptResult>()
        ended.interrupt()
        ended.onEnd { end in heard.withLock { $0.append(end.result.end.words) } }
        #expect(heard.withLock { $0 } == ["exit:2", "the runner stopped"])
    }

    /// How the watch ended, as the policy's stop; nil when the work finished.
    static func stop<Value>(_ watch: AttemptWatch<Value>) async -> Teardown.Stop? {
        if case .stopped(let stop) = await watch.end { return stop }
        return nil
    }
}
