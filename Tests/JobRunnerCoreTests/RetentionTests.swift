import Foundation
import JobRunnerCore
import Testing

@Suite struct RetentionTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func run(_ id: String, endedHoursAgo hours: Double, state: RunState = .succeeded) -> RunRecord {
        let end = now.addingTimeInterval(-hours * 3600)
        return RunRecord(
            id: id, state: state, startedAt: end.addingTimeInterval(-1),
            finishedAt: state.isFinal ? end : nil, jobIDs: [], runnerPID: 1)
    }

    @Test func keepsTheNewestFinishedRunsUpToTheCount() {
        let policy = RetentionPolicy(runs: 2, age: .seconds(86_400 * 365))
        let runs = [run("a", endedHoursAgo: 3), run("b", endedHoursAgo: 1), run("c", endedHoursAgo: 2)]
        #expect(policy.runsToPrune(runs, now: now) == ["a"])
    }

    @Test func prunesFinishedRunsOlderThanTheAge() {
        let policy = RetentionPolicy(runs: 100, age: .seconds(2 * 3600))
        let runs = [run("old", endedHoursAgo: 5), run("new", endedHoursAgo: 1)]
        #expect(policy.runsToPrune(runs, now: now) == ["old"])
    }

    /// `prune --keep 3` and `retention: {runs: 3}` leave three finished runs, the current one
    /// among them when it is finished (it was kept on top: four).
    @Test func aFinishedRunThatIsKeptCountsAmongTheRunsKept() {
        let policy = RetentionPolicy(runs: 3, age: .seconds(86_400 * 365))
        let runs = (1...5).map { run("r\($0)", endedHoursAgo: Double($0)) }
        #expect(policy.runsToPrune(runs, now: now, keeping: ["r1"]) == ["r4", "r5"])
        #expect(
            policy.runsToPrune(runs, now: now, keeping: ["r5"]) == ["r3", "r4"],
            "the oldest, kept, takes one of the three places")
        #expect(
            RetentionPolicy(runs: 1).runsToPrune(runs, now: now, keeping: ["r1"]) == ["r2", "r3", "r4", "r5"])
    }

    @Test func neverPrunesUnfinishedOrProtectedRuns() {
        let policy = RetentionPolicy(runs: 0, age: .seconds(1))
        let runs = [
            run("running", endedHoursAgo: 9, state: .running),
            run("stopped", endedHoursAgo: 9, state: .stopped),
            run("current", endedHoursAgo: 9), run("done", endedHoursAgo: 9),
            run("skipped", endedHoursAgo: 9, state: .skipped),
        ]
        #expect(Set(policy.runsToPrune(runs, now: now, keeping: ["current"])) == ["done", "skipped"])
    }
}

@Suite struct FinishedRunsTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func ended(_ id: String, secondsAgo: Double, state: RunState = .succeeded) -> RunRecord {
        let end = now.addingTimeInterval(-secondsAgo)
        return RunRecord(
            id: id, state: state, startedAt: end.addingTimeInterval(-1),
            finishedAt: state.isFinal ? end : nil, jobIDs: [], runnerPID: 1)
    }

    @Test func followsTheRunsThatChangesFinishAndPrunesTheOldestBeyondTheLimit() {
        var runs = FinishedRuns([ended("a", secondsAgo: 30), ended("live", secondsAgo: 0, state: .running)])
        #expect(runs.count == 1)
        runs.note([.putRun(ended("b", secondsAgo: 20)), .putRun(ended("c", secondsAgo: 10))])
        runs.note([.putRun(ended("d", secondsAgo: 5, state: .running))])
        #expect(runs.count == 3)
        let pruned = runs.prune(RetentionPolicy(runs: 2), now: now, keeping: [])
        #expect(pruned == ["a"])
        #expect(runs.count == 2, "what is pruned is forgotten")
        #expect(runs.prune(RetentionPolicy(runs: 2), now: now, keeping: []).isEmpty)
    }

    @Test func aDeletedOrResumedRunIsForgottenAndAKeptOneStays() {
        var runs = FinishedRuns([
            ended("a", secondsAgo: 30), ended("b", secondsAgo: 20), ended("c", secondsAgo: 10),
        ])
        runs.note([.deleteRun("c")])
        // Resumed: the run is no longer finished.
        runs.note([.putRun(ended("b", secondsAgo: 0, state: .running))])
        #expect(runs.count == 1)
        #expect(runs.prune(RetentionPolicy(runs: 0), now: now, keeping: ["a"]).isEmpty)
        #expect(runs.prune(RetentionPolicy(runs: 0), now: now, keeping: []) == ["a"])
    }
}
