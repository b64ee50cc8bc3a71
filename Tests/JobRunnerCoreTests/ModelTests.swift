import Foundation
import JobRunnerCore
import Testing

@Suite struct JobDurationTests {
    @Test(arguments: [
        ("500ms", Int64(500)), ("30s", 30_000), ("15m", 900_000), ("2h", 7_200_000), ("1h30m", 5_400_000),
        ("1d", 86_400_000), ("45", 45_000), ("1.5", 1500), ("0", 0), (" 10s ", 10_000),
    ])
    func parsesDurations(text: String, milliseconds: Int64) {
        #expect(JobDuration.parse(text)?.milliseconds == milliseconds)
    }

    @Test(arguments: ["", "ten", "10x", "5m3", "-3s", "m", "1h 30m", "99999999999999d"])
    func rejectsNonDurations(text: String) {
        #expect(JobDuration.parse(text) == nil)
    }

    @Test func formatsDurations() {
        #expect(JobDuration.format(.milliseconds(5_400_000)) == "1h30m")
        #expect(JobDuration.format(.milliseconds(1500)) == "1.5s")
        #expect(JobDuration.format(.milliseconds(1024)) == "1.024s")
        #expect(JobDuration.format(.milliseconds(61_050)) == "1m1.05s")
        #expect(JobDuration.format(.milliseconds(250)) == "250ms")
        #expect(JobDuration.format(.zero) == "0s")
    }
}

@Suite struct RetryPolicyTests {
    /// A source that always returns the same number, so jitter is exact.
    struct Constant: RandomSource {
        var value: Double
        mutating func nextUnit() -> Double { value }
    }

    @Test func exponentialGrowsByFactorUpToMaxDelay() {
        let policy = RetryPolicy(
            attempts: 10, delay: .seconds(2), factor: 3, maxDelay: .seconds(60), jitter: 0)
        var random = Constant(value: 0.5)
        let delays = (1...5).map { policy.delay(afterAttempt: $0, random: &random).milliseconds }
        #expect(delays == [2000, 6000, 18000, 54000, 60000])
    }

    @Test func fixedAndNone() {
        var random = Constant(value: 0.9)
        let fixed = RetryPolicy(backoff: .fixed, delay: .seconds(5), jitter: 0)
        #expect(fixed.delay(afterAttempt: 4, random: &random) == .seconds(5))
        let none = RetryPolicy(backoff: .none, delay: .seconds(5))
        #expect(none.delay(afterAttempt: 4, random: &random) == .zero)
    }

    @Test func jitterScalesWithinBounds() {
        let policy = RetryPolicy(backoff: .fixed, delay: .seconds(10), jitter: 0.2)
        var low = Constant(value: 0)
        var high = Constant(value: 0.999_999)
        #expect(policy.delay(afterAttempt: 1, random: &low) == .seconds(8))
        #expect(policy.delay(afterAttempt: 1, random: &high).milliseconds == 12000)
        var seeded = SeededRandomSource(seed: 42)
        for attempt in 1...100 {
            let delay = policy.delay(afterAttempt: attempt, random: &seeded).milliseconds
            #expect((8000...12000).contains(delay))
        }
    }

    @Test func attemptsAndExitCodesDecideRetries() {
        let three = RetryPolicy(attempts: 3)
        #expect(three.allowsAnotherAttempt(countedAttempts: 2, exitCode: 1))
        #expect(!three.allowsAnotherAttempt(countedAttempts: 3, exitCode: 1))
        let unlimited = RetryPolicy(attempts: nil)
        #expect(unlimited.allowsAnotherAttempt(countedAttempts: 1000, exitCode: 1))
        let onlyTwo = RetryPolicy(attempts: 5, retryOn: [2])
        #expect(onlyTwo.allowsAnotherAttempt(countedAttempts: 1, exitCode: 2))
        #expect(!onlyTwo.allowsAnotherAttempt(countedAttempts: 1, exitCode: 1))
        #expect(onlyTwo.allowsAnotherAttempt(countedAttempts: 1, exitCode: 75), "exit 75 always retries")
        #expect(
            !onlyTwo.allowsAnotherAttempt(countedAttempts: 1, exitCode: nil), "a timeout is no listed code")
    }
}

@Suite struct JobGraphTests {
    @Test func findsACycleAsAPath() {
        let cycle = JobGraph.findCycle(in: [("a", ["b"]), ("b", ["c"]), ("c", ["a"]), ("d", [])])
        #expect(cycle == ["a", "b", "c", "a"])
    }

    @Test func findsSelfNeeds() {
        #expect(JobGraph.findCycle(in: [("a", ["a"])]) == ["a", "a"])
    }

    @Test func acceptsADeepChainWithoutRecursion() {
        let chain = (0..<50_000).map { ("j\($0)", $0 == 0 ? [String]() : ["j\($0 - 1)"]) }
        #expect(JobGraph.findCycle(in: chain) == nil)
    }

    @Test func ignoresUnknownNeeds() {
        #expect(JobGraph.findCycle(in: [("a", ["missing"])]) == nil)
    }
}
