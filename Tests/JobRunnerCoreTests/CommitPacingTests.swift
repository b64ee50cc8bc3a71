import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

@Suite struct CommitPacingTests {
    @Test func adaptiveWaitsOnlyForAttemptsThatEndSoonerThanACommit() {
        var pacing = CommitPacing(.adaptive)
        #expect(pacing.waitForFreshAttempts == nil, "nothing measured yet: no wait")
        pacing.committed(in: .milliseconds(1))
        #expect(pacing.waitForFreshAttempts == nil, "no attempt measured yet")
        pacing.attemptEnded(after: .microseconds(100))
        #expect(pacing.waitForFreshAttempts == .milliseconds(1), "fast attempts: wait about one commit")
        for _ in 0..<100 { pacing.attemptEnded(after: .milliseconds(5)) }
        #expect(pacing.waitForFreshAttempts == nil, "attempts slower than a commit are not waited for")
    }

    @Test func theWaitIsBoundedWhateverACommitTakes() {
        var pacing = CommitPacing(.adaptive)
        pacing.committed(in: .seconds(3))
        pacing.attemptEnded(after: .milliseconds(1))
        #expect(pacing.waitForFreshAttempts == .milliseconds(20))
    }

    @Test func fixedPolicies() {
        var never = CommitPacing(.never)
        never.committed(in: .seconds(1))
        never.attemptEnded(after: .microseconds(1))
        #expect(never.waitForFreshAttempts == nil)
        #expect(CommitPacing(.always(window: .seconds(2))).waitForFreshAttempts == .seconds(2))
    }

    /// Eight chains of five jobs in a pipeline of eight lanes: when the runner waits for the
    /// attempts a commit started, each later commit carries the end of one job of every chain
    /// and the start of its dependent: a commit per wave, not one per job.
    @Test func lanesShareCommitsWhenFreshAttemptsAreWaitedFor() async throws {
        let store = CountingStore()
        let harness = Harness(store: store)
        var jobs: [JobDefinition] = []
        for chain in 0..<8 {
            for link in 0..<5 {
                jobs.append(
                    job("c\(chain)-\(link)", needs: link == 0 ? [] : ["c\(chain)-\(link - 1)"], pipeline: "p")
                )
            }
        }
        let summary = try await harness.runner(
            jobs, pipelines: [PipelineDefinition(name: "p", maxConcurrent: 8)],
            pacing: .always(window: .seconds(600))
        ).run()
        #expect(summary.state == .succeeded)
        #expect(summary.counts[.succeeded] == 40)
        // The opening (which starts the first wave), one commit per later wave and the last
        // wave's ends, the close: 7. A commit per job end would be over 40.
        #expect(store.submissions <= 8, "\(store.submissions) commits for 40 jobs in 8 lanes")
        let snapshot = try #require(try await store.currentSnapshot())
        #expect(snapshot.jobs.values.allSatisfy { $0.state == .succeeded && $0.attempts == 1 })
    }
}

/// An in-memory store that counts the batches it is given.
final class CountingStore: ForwardingStore {
    let inner: any QueueStore = InMemoryQueueStore()
    private let count = Locked(0)

    var submissions: Int { count.withLock { $0 } }

    func submit(
        _ changes: [StoreChange], under claim: StoreClaim,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        count.withLock { $0 += 1 }
        inner.submit(changes, under: claim, completion: completion)
    }
}
