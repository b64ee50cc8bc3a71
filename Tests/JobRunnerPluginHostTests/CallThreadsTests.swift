import Foundation
import JobRunnerCore
import JobRunnerPluginHost
import Testing

/// The threads in-process plugin calls run on: calls handed over at once all run, on every
/// thread, never more at once than there are threads; a stop turns waiting and later calls away.
@Suite struct CallThreadsTests {
    /// Four calls that each wait until all four run at once: they can only end if the one wake
    /// of the caller led the woken threads to wake every other one. Then many more, all run.
    @Test(.timeLimit(.minutes(5))) func callsHandedOverAtOnceWakeEveryThreadAndAllRun() async {
        let threads = CallThreads(count: 4)
        threads.start()
        defer { threads.stop() }
        let meeting = Meeting(expected: 4)
        let tally = Tally()
        let total = 4 + 200
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let finish: @Sendable (Bool) -> Void = { running in
                if tally.ended(running: running) == total { done.resume() }
            }
            for _ in 0..<4 {
                threads.submit { running in
                    tally.began()
                    meeting.arrive()
                    finish(running)
                }
            }
            for _ in 0..<200 {
                threads.submit { running in
                    tally.began()
                    finish(running)
                }
            }
        }
        #expect(tally.mostAtOnce == 4, "every thread took calls, one at a time")
        #expect(tally.turnedAway == 0)
    }

    @Test(.timeLimit(.minutes(5))) func aStopTurnsWaitingAndLaterCallsAway() async {
        let threads = CallThreads(count: 1)
        threads.start()
        let gate = Meeting(expected: 2)
        let tally = Tally()
        // The one thread is held by this call until the test has stopped the threads.
        let holding = Meeting(expected: 2)
        threads.submit { running in
            tally.began()
            holding.arrive()
            gate.arrive()
            _ = tally.ended(running: running)
        }
        holding.arrive()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let waiting = Locked(3)
            for _ in 0..<3 {
                threads.submit { running in
                    _ = tally.ended(running: running)
                    if waiting.withLock({
                        $0 -= 1
                        return $0
                    }) == 0 {
                        done.resume()
                    }
                }
            }
            threads.stop()
        }
        #expect(tally.turnedAway == 3, "the calls waiting for the thread end without running")
        let later = Locked<Bool?>(nil)
        threads.submit { running in later.withLock { $0 = running } }
        #expect(later.withLock { $0 } == false, "a call after the stop ends at once")
        gate.arrive()
    }
}

/// Blocks each caller until `expected` callers have arrived.
final class Meeting: Sendable {
    private let condition = NSCondition()
    private let arrived = Locked(0)
    private let expected: Int

    init(expected: Int) { self.expected = expected }

    func arrive() {
        condition.lock()
        defer { condition.unlock() }
        arrived.withLock { $0 += 1 }
        condition.broadcast()
        while arrived.withLock({ $0 }) < expected { condition.wait() }
    }
}

/// Counts calls running at once, the most of them, and those turned away.
final class Tally: Sendable {
    private struct Counts {
        var running = 0
        var most = 0
        var ended = 0
        var turnedAway = 0
    }
    private let counts = Locked(Counts())

    func began() {
        counts.withLock {
            $0.running += 1
            $0.most = max($0.most, $0.running)
        }
    }

    /// Notes a call's end; returns how many have ended.
    func ended(running: Bool) -> Int {
        counts.withLock {
            if running { $0.running -= 1 } else { $0.turnedAway += 1 }
            $0.ended += 1
            return $0.ended
        }
    }

    var mostAtOnce: Int { counts.withLock { $0.most } }
    var turnedAway: Int { counts.withLock { $0.turnedAway } }
}
