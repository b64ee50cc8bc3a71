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
