import Foundation
import JobRunnerTesting
import Testing

@testable import JobRunnerCore

/// The alarm that ends a wait for fresh attempts, and the bound it keeps on that wait.
@Suite struct PacingAlarmTests {
    /// Armed for an hour, then for a moment: the thread, asleep for the hour, is woken for the
    /// nearer date and rings with the number of the last arming only.
    @Test(.timeLimit(.minutes(5))) func aNearerDateWakesTheAlarmAndOnlyTheLastArmingRings() async {
        let rings = RingLog()
        let alarm = PacingAlarm { rings.note($0) }
        defer { alarm.stop() }
        let far = alarm.arm(after: .seconds(3600))
        let near = alarm.arm(after: .milliseconds(1))
        #expect(await rings.next() == near)
        #expect(far != near)
        // Disarmed, then armed again: it rings for the new arming.
        let taken = alarm.arm(after: .seconds(3600))
        alarm.disarm()
        let again = alarm.arm(after: .milliseconds(1))
        #expect(await rings.next() == again)
        #expect(rings.all == [near, again], "nothing rang for \(far) or \(taken)")
    }

    /// A stopped alarm has no thread to wait: an arming rings at once, so no commit waits
    /// for an alarm that cannot ring.
    @Test func aStoppedAlarmRingsAtOnce() {
        let rings = RingLog()
        let alarm = PacingAlarm { rings.note($0) }
        alarm.stop()
        let alarmNumber = alarm.arm(after: .seconds(3600))
        #expect(rings.all == [alarmNumber])
    }

    /// A fresh attempt that hangs does not hold the next commit past the wait's bound: `quick`
    /// ends beside `hang`, and its end is stored and reported while `hang` still runs.
    @Test(.timeLimit(.minutes(5))) func aCommitWaitingForAHangingFreshAttemptGoesAfterItsBound() async throws
    {
        let handler = ScriptedHandler(hold: ["hang"])
        let harness = Harness(handler: handler)
        let runner = harness.runner([job("hang"), job("quick")], pacing: .always(window: .milliseconds(20)))
        let run = Task { try await runner.run() }
        await harness.observer.waitFor(.succeeded, job: "quick")
        #expect(!harness.observer.events.contains { $0.job == "hang" && $0.kind == .succeeded })
        handler.release("hang")
        let summary = try await run.value
        #expect(summary.counts[.succeeded] == 2)
    }
}

/// The numbers an alarm rang with, in order; ``next()`` awaits the next one.
final class RingLog: Sendable {
    private struct State {
        var rung: [Int] = []
        var taken = 0
        var waiter: CheckedContinuation<Int, Never>?
    }
    private let state = Locked(State())

    var all: [Int] { state.withLock { $0.rung } }

    func note(_ alarm: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Int, Never>? in
            state.rung.append(alarm)
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.taken += 1
            return waiter
        }
        waiter?.resume(returning: alarm)
    }

    func next() async -> Int {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            let ready = state.withLock { state -> Int? in
                if state.taken < state.rung.count {
                    state.taken += 1
                    return state.rung[state.taken - 1]
                }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
