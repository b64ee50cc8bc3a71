import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

@Suite struct RunnerTests {
    @Test func runsADagInDependencyOrder() async throws {
        let harness = Harness()
        let summary = try await harness.run([
            job("test", needs: ["build"]), job("build", needs: ["fetch"]), job("fetch"),
            job("lint", needs: ["fetch"]),
        ])
        #expect(summary.state == .succeeded)
        #expect(summary.counts[.succeeded] == 4)
        let order = harness.handler.startedJobs
        #expect(order.first == "fetch")
        #expect(order.firstIndex(of: "build")! < order.firstIndex(of: "test")!)
        let snapshot = try #require(try await harness.store.currentSnapshot())
        #expect(snapshot.run.state == .succeeded)
        #expect(snapshot.jobs.values.allSatisfy { $0.state == .succeeded && $0.attempts == 1 })
    }

    @Test func pipelineLimitCapsConcurrency() async throws {
        let ids = (0..<6).map { "j\($0)" }
        let handler = ScriptedHandler(hold: Set(ids))
        let harness = Harness(handler: handler)
        let runner = harness.runner(
            ids.map { job($0, pipeline: "p") }, pipelines: [PipelineDefinition(name: "p", maxConcurrent: 2)])
        let task = Task { try await runner.run() }
        await handler.waitForStarts(2)
        #expect(handler.startedJobs.count == 2)
        for id in ids { handler.release(id) }
        let summary = try await task.value
        #expect(summary.state == .succeeded)
        #expect(handler.maxConcurrent == 2)
    }

    @Test func globalCapAppliesAcrossPipelines() async throws {
        let ids = ["a1", "a2", "b1", "b2"]
        let handler = ScriptedHandler(hold: Set(ids))
        let harness = Harness(handler: handler)
        let runner = harness.runner(
            [
                job("a1", pipeline: "a"), job("a2", pipeline: "a"), job("b1", pipeline: "b"),
                job("b2", pipeline: "b"),
            ],
            pipelines: [PipelineDefinition(name: "a"), PipelineDefinition(name: "b")], maxRunning: 3)
        let task = Task { try await runner.run() }
        await handler.waitForStarts(3)
        for id in ids { handler.release(id) }
        _ = try await task.value
        #expect(handler.maxConcurrent == 3)
    }

    @Test func higherPriorityStartsFirstThenFileOrder() async throws {
        let harness = Harness()
        _ = try await harness.run(
            [
                job("low", pipeline: "p"), job("first", pipeline: "p"),
                job("high", pipeline: "p", priority: 5), job("second", pipeline: "p"),
            ],
            pipelines: [PipelineDefinition(name: "p", maxConcurrent: 1)])
        #expect(harness.handler.startedJobs == ["high", "low", "first", "second"])
    }

    @Test func sequentialPipelineFinishesEarlierFilesFirst() async throws {
        let harness = Harness()
        _ = try await harness.run(
            [
                job("a", pipeline: "s", file: 0), job("b", pipeline: "s", priority: 9, file: 1),
                job("c", pipeline: "s", file: 0),
            ],
            pipelines: [PipelineDefinition(name: "s", maxConcurrent: 0, order: .sequential)])
        let order = harness.handler.startedJobs
        #expect(order.last == "b", "b is in the second file; its high priority does not let it jump ahead")
    }

    @Test func failureBlocksDependentsTransitively() async throws {
        let handler = ScriptedHandler(scripts: ["compile": [.failed(exitCode: 2)]])
        let harness = Harness(handler: handler)
        let summary = try await harness.run([
            job("compile"), job("test", needs: ["compile"]), job("ship", needs: ["test"]), job("docs"),
        ])
        #expect(summary.state == .failed)
        let jobs = try #require(try await harness.store.currentSnapshot()).jobs
        #expect(jobs["compile"]?.state == .failed)
        #expect(jobs["compile"]?.reason?.words == "exit:2")
        #expect(jobs["test"]?.state == .blocked)
        #expect(jobs["test"]?.reason?.words == "needs:compile")
        #expect(jobs["ship"]?.state == .blocked)
        #expect(jobs["ship"]?.reason?.words == "needs:test")
        #expect(jobs["docs"]?.state == .succeeded)
        #expect(!handler.startedJobs.contains("test"))
    }

    @Test func retriesAfterTheExactBackoffOnTheInjectedClock() async throws {
        let policy = RetryPolicy(attempts: 3, delay: .seconds(10), factor: 2, jitter: 0)
        let handler = ScriptedHandler(scripts: [
            "flaky": [.failed(exitCode: 1), .failed(exitCode: 1), .succeeded]
        ])
        let harness = Harness(handler: handler)
        let start = harness.clock.now()
        let runner = harness.runner([job("flaky", retry: policy)])
        let task = Task { try await runner.run() }

        await harness.clock.waitForSleepers()
        #expect(harness.clock.sleeperDeadlines == [start.addingTimeInterval(10)])
        let waiting = try #require(try await harness.store.currentSnapshot()).jobs["flaky"]
        #expect(waiting?.state == .waiting)
        #expect(waiting?.reason?.words == "backoff")
        #expect(waiting?.nextAttemptAt == start.addingTimeInterval(10))
        harness.clock.advance(by: 10)

        await harness.clock.waitForSleepers()
        #expect(harness.clock.sleeperDeadlines == [start.addingTimeInterval(30)], "second delay is 10s × 2")
        harness.clock.advance(by: 20)

        let summary = try await task.value
        #expect(summary.state == .succeeded)
        #expect(handler.calls.map(\.attempt) == [1, 2, 3])
        let retrying = harness.observer.events.filter { $0.kind == .retrying }.map(\.delay)
        #expect(retrying == [.seconds(10), .seconds(20)])
    }

    @Test func exhaustedAttemptsFail() async throws {
        let handler = ScriptedHandler(scripts: ["x": [.failed(exitCode: 3), .failed(exitCode: 4)]])
        let harness = Harness(handler: handler)
        let summary = try await harness.run([job("x", retry: RetryPolicy(attempts: 2, backoff: .none))])
        #expect(summary.state == .failed)
        let record = try #require(try await harness.store.currentSnapshot()?.jobs["x"])
        #expect(record.attempts == 2)
        #expect(record.exitCode == 4)
    }

    @Test func retryOnLimitsWhichExitCodesRetryButTempfailAlwaysDoes() async throws {
        let handler = ScriptedHandler(scripts: [
            "listed": [
                AttemptResult(.exited(75)), .failed(exitCode: 9),
            ]
        ])
        let harness = Harness(handler: handler)
        _ = try await harness.run([
            job("listed", retry: RetryPolicy(attempts: 5, backoff: .none, retryOn: [2]))
        ])
        #expect(handler.calls.count == 2, "75 retried, 9 is not in retry.on")
    }

    @Test func retryAfterReplacesTheBackoff() async throws {
        let handler = ScriptedHandler(scripts: [
            "api": [AttemptResult(.exited(1), retryAfter: .seconds(90))]
        ])
        let harness = Harness(handler: handler)
        let start = harness.clock.now()
        let runner = harness.runner([
            job("api", retry: RetryPolicy(attempts: 2, delay: .seconds(1), jitter: 0))
        ])
        let task = Task { try await runner.run() }
        await harness.clock.waitForSleepers()
        #expect(harness.clock.sleeperDeadlines == [start.addingTimeInterval(90)])
        harness.clock.advance(by: 90)
        #expect(try await task.value.state == .succeeded)
    }

    @Test func maxElapsedStopsRetries() async throws {
        let handler = ScriptedHandler(scripts: ["x": [.failed(exitCode: 1), .failed(exitCode: 1)]])
        let harness = Harness(handler: handler)
        let policy = RetryPolicy(
            attempts: 10, backoff: .fixed, delay: .seconds(60), jitter: 0, maxElapsed: .seconds(30))
        let summary = try await harness.run([job("x", retry: policy)])
        #expect(summary.state == .failed)
        #expect(handler.calls.count == 1, "the next attempt would start after maxElapsed")
    }

    @Test func outputsReachDependentsAndAreStored() async throws {
        let handler = ScriptedHandler(scripts: [
            "make": [AttemptResult(.succeeded, exitCode: 0, outputs: ["version": "1.2"])]
        ])
        let harness = Harness(handler: handler)
        _ = try await harness.run([job("make"), job("use", needs: ["make"])])
        #expect(handler.lastRequest("use")?.neededOutputs == ["make": ["version": "1.2"]])
        #expect(try await harness.store.currentSnapshot()?.outputs["make"] == ["version": "1.2"])
        #expect(
            harness.observer.events.contains {
                $0.kind == .output && $0.key == "version" && $0.value == "1.2"
            })
    }

    @Test func skippedJobsLetDependentsGoOnAndDisabledJobsNeverStart() async throws {
        let handler = ScriptedHandler(scripts: [
            "maybe": [AttemptResult(.skipped("nothing to do"), exitCode: 0)]
        ])
        let harness = Harness(handler: handler)
        let summary = try await harness.run([
            job("maybe"), job("after", needs: ["maybe"]), job("off", enabled: false),
        ])
        #expect(summary.state == .succeeded)
        let jobs = try #require(try await harness.store.currentSnapshot()).jobs
        #expect(jobs["maybe"]?.state == .skipped)
        #expect(jobs["maybe"]?.reason?.words == "nothing to do")
        #expect(jobs["after"]?.state == .succeeded)
        #expect(jobs["off"]?.state == .skipped)
        #expect(!handler.startedJobs.contains("off"))
    }

    @Test func noEventIsEmittedAndNoDependentStartsBeforeTheCommit() async throws {
        let store = GatedStore()
        let harness = Harness(store: store)
        let runner = harness.runner([job("a"), job("b", needs: ["a"])])
        let task = Task { try await runner.run() }
        await store.waitForPending(1)
        #expect(harness.observer.events.isEmpty, "nothing reported while the first batch is not durable")
        #expect(harness.handler.calls.isEmpty, "nothing started while the first batch is not durable")
        store.open()
        let summary = try await task.value
        #expect(summary.state == .succeeded)
        #expect(harness.observer.lines.prefix(4) == ["queued a", "queued b", "started a", "succeeded a"])
    }

    @Test func stopInterruptsRunningAttemptsWithoutSpendingThem() async throws {
        let store = InMemoryQueueStore()
        let handler = ScriptedHandler(hold: ["slow"])
        let first = Harness(store: store, handler: handler)
        let jobs = [job("slow"), job("after", needs: ["slow"])]
        let runner = first.runner(jobs)
        let task = Task { try await runner.run() }
        await handler.waitForStarts(1)
        runner.requestStop(signal: SIGINT)
        let stopped = try await task.value
        #expect(stopped.state == .stopped)
        #expect(stopped.stopSignal == SIGINT)
        let record = try #require(try await store.currentSnapshot()?.jobs["slow"])
        #expect(record.state == .waiting)
        #expect(record.reason == .waiting(.interrupted))
        #expect(record.countedAttempts == 0)
        #expect(try await store.currentSnapshot()?.attempts["slow"]?.first?.outcome == .interrupted)

        let second = Harness(store: store)
        let resumed = try await second.run(jobs)
        #expect(resumed.resumed)
        #expect(resumed.runID == stopped.runID)
        #expect(resumed.state == .succeeded, "retry.attempts 1 still allows the uncounted attempt")
        #expect(second.handler.calls.map(\.attempt) == [2, 1])
    }

    @Test func newFlagStartsAFreshRun() async throws {
        let store = InMemoryQueueStore()
        let first = try await Harness(store: store).run([job("a")])
        let second = try await Harness(store: store).run([job("a")], startNew: true)
        #expect(first.runID != second.runID)
        #expect(!second.resumed)
    }

    @Test func aFinishedRunIsNotResumed() async throws {
        let store = InMemoryQueueStore()
        let first = try await Harness(store: store).run([job("a")])
        let again = Harness(store: store)
        let second = try await again.run([job("a")])
        #expect(first.runID != second.runID)
        #expect(again.handler.startedJobs == ["a"])
    }
}

/// A store whose commits wait until the test opens it: shows that nothing is reported or
/// started before the state that says so is durable.
final class GatedStore: ForwardingStore {
    let inner: any QueueStore = InMemoryQueueStore()
    private struct State {
        var isOpen = false
        var held:
            [(
                changes: [StoreChange], claim: StoreClaim,
                completion: @Sendable (Result<Void, StoreError>) -> Void
            )] =
                []
        var watchers: [(Int, CheckedContinuation<Void, Never>)] = []
    }
    private let state = Locked(State())

    func submit(
        _ changes: [StoreChange], under claim: StoreClaim,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        let (passThrough, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
            if state.isOpen { return (true, []) }
            state.held.append((changes, claim, completion))
            let count = state.held.count
            let ready = state.watchers.filter { $0.0 <= count }.map(\.1)
            state.watchers.removeAll { $0.0 <= count }
            return (false, ready)
        }
        for watcher in ready { watcher.resume() }
        if passThrough { inner.submit(changes, under: claim, completion: completion) }
    }

    func waitForPending(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.held.count >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    func open() {
        let held = state.withLock { state in
            state.isOpen = true
            defer { state.held = [] }
            return state.held
        }
        for (changes, claim, completion) in held {
            inner.submit(changes, under: claim, completion: completion)
        }
    }
}
