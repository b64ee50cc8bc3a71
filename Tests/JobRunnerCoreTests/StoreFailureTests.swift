import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

/// A commit that fails (a full disk) stops the run: running attempts are ended and `run`
/// throws, never waits for an attempt that was decided in the lost commit and so never began.
@Suite struct StoreFailureTests {
    @Test func aFailedCommitEndsRunningAttemptsAndThrows() async throws {
        let inner = InMemoryQueueStore()
        let store = FailingStore(inner)
        let handler = ScriptedHandler(hold: ["a", "slow"])
        let harness = Harness(store: store, handler: handler)
        let runner = harness.runner([job("a"), job("b", needs: ["a"]), job("slow")])
        let task = Task { try await runner.run() }
        await handler.waitForStarts(2)
        store.startFailing()
        // a's end decides b's start; that decision is never stored, so b never begins.
        handler.release("a")
        let outcome = await task.result
        #expect(throws: StoreError.self) { try outcome.get() }
        #expect(handler.startedJobs.sorted() == ["a", "slow"])
        let stored = try #require(try await inner.currentSnapshot())
        #expect(stored.jobs["a"]?.state == .running, "what was stored stays as it was")
        #expect(stored.jobs["slow"]?.state == .running)
        #expect(stored.run.state == .running, "the next run resumes it")
    }

    @Test func theNextRunResumesWhatAFailedCommitLeft() async throws {
        let inner = InMemoryQueueStore()
        let store = FailingStore(inner)
        let handler = ScriptedHandler(hold: ["a"])
        let first = Harness(store: store, handler: handler).runner([job("a"), job("b", needs: ["a"])])
        let task = Task { try await first.run() }
        await handler.waitForStarts(1)
        store.startFailing()
        handler.release("a")
        _ = await task.result

        let again = Harness(store: inner)
        let summary = try await again.run([job("a"), job("b", needs: ["a"])])
        #expect(summary.resumed)
        #expect(summary.state == .succeeded)
        #expect(again.handler.startedJobs == ["a", "b"])
    }
}
