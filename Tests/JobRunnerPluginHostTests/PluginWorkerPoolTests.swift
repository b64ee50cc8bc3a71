import Foundation
import JobRunnerCore
import JobRunnerPluginHost
import JobRunnerTesting
import Synchronization
import Testing

/// The pool of `isolation: process`, with workers that are fakes: how calls get workers, and
/// what a worker's end does to the attempt and to the pool.
struct PluginWorkerPoolTests {
    static let ok = Array(#"{"status":"succeeded"}"#.utf8)

    /// A worker whose every answer is scripted: the ready frame, then one answer per call
    /// (the last repeats). ``hang`` stands for a worker that does not answer: its exchange ends
    /// as a real one's does when the deadline it was given passes.
    final class FakeWorker: PluginWorker {
        static let hang = PluginWorkerExchange.stopped(.timedOut(after: .zero))

        let hello: PluginWorkerExchange
        let answers: [PluginWorkerExchange]
        let counter: Counters
        private let calls = Atomic<Int>(0)

        init(hello: PluginWorkerExchange = .reply([]), answers: [PluginWorkerExchange], counter: Counters) {
            self.hello = hello
            self.answers = answers
            self.counter = counter
        }

        func exchange(_ request: [UInt8]?, deadline: Deadline?, teardown: Teardown) async
            -> PluginWorkerExchange
        {
            guard request != nil else { return answer(hello, deadline) }
            counter.enter()
            defer { counter.leave() }
            // Lets other calls run meanwhile, so overlapping calls would be seen.
            await Task.yield()
            let index = calls.add(1, ordering: .sequentiallyConsistent).newValue - 1
            return answer(answers[min(index, answers.count - 1)], deadline)
        }

        private func answer(_ scripted: PluginWorkerExchange, _ deadline: Deadline?) -> PluginWorkerExchange {
            guard scripted == Self.hang, let deadline else { return scripted }
            return .stopped(.timedOut(after: deadline.timeout))
        }

        func stop() { counter.stopped() }
    }

    /// What the fakes did: calls at once (the most seen), starts, stops.
    final class Counters: Sendable {
        private struct State {
            var running = 0
            var most = 0
            var starts = 0
            var stops = 0
        }
        private let state = Locked(State())
        func enter() {
            state.withLock {
                $0.running += 1
                $0.most = max($0.most, $0.running)
            }
        }
        func leave() { state.withLock { $0.running -= 1 } }
        func started() { state.withLock { $0.starts += 1 } }
        func stopped() { state.withLock { $0.stops += 1 } }
        var most: Int { state.withLock { $0.most } }
        var starts: Int { state.withLock { $0.starts } }
        var stops: Int { state.withLock { $0.stops } }
    }

    static func pool(
        capacity: Int, counters: Counters,
        make: @escaping @Sendable () -> Result<any PluginWorker, PluginWorkerStartError>
    ) -> PluginWorkerPool {
        PluginWorkerPool(capacity: capacity, clock: ManualClock()) { _, _ in
            counters.started()
            return make()
        }
    }

    static func call(_ pool: PluginWorkerPool, library: String = "/lib/libx.so") async -> AttemptResult {
        await pool.call(
            library: library, plugin: "x", request: Array("{}".utf8), teardown: Teardown(killGrace: .zero))
    }

    @Test func manyCallsRunOnAtMostCapacityWorkersOneCallEach() async {
        let counters = Counters()
        let pool = Self.pool(capacity: 3, counters: counters) {
            .success(FakeWorker(answers: [.reply(Self.ok)], counter: counters))
        }
        let results = await withTaskGroup(of: AttemptResult.self) { group in
            for _ in 0..<40 { group.addTask { await Self.call(pool) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 40)
        #expect(results.allSatisfy { $0.outcome == .succeeded })
        #expect(counters.starts <= 3 && counters.starts >= 1)
        #expect(counters.most <= 3)
    }

    @Test func eachLibraryHasWorkersOfItsOwn() async {
        let counters = Counters()
        let pool = Self.pool(capacity: 1, counters: counters) {
            .success(FakeWorker(answers: [.reply(Self.ok)], counter: counters))
        }
        #expect(await Self.call(pool, library: "/a/liba.so").outcome == .succeeded)
        #expect(await Self.call(pool, library: "/b/libb.so").outcome == .succeeded)
        #expect(await Self.call(pool, library: "/a/liba.so").outcome == .succeeded)
        #expect(counters.starts == 2)
    }

    @Test func aCrashFailsItsCallAndTheNextCallGetsANewWorker() async {
        let counters = Counters()
        let first = Atomic<Bool>(true)
        let pool = Self.pool(capacity: 1, counters: counters) {
            let crashing = first.exchange(false, ordering: .sequentiallyConsistent)
            return .success(
                FakeWorker(answers: [crashing ? .signalled(SIGSEGV) : .reply(Self.ok)], counter: counters))
        }
        let crashed = await Self.call(pool)
        #expect(crashed.outcome == .failed)
        #expect(crashed.signal == SIGSEGV)
        #expect(crashed.end == .crashed(.init(.worker, .signalled(SIGSEGV))))
        #expect(crashed.end.words == "the plugin's worker died: signal 11 (SIGSEGV, a bad memory access)")
        #expect(await Self.call(pool).outcome == .succeeded)
        #expect(counters.starts == 2)
    }

    @Test func aTimeoutEndsTheCallAsTimeoutAndTheWorkerIsReplaced() async {
        let counters = Counters()
        let first = Atomic<Bool>(true)
        let pool = Self.pool(capacity: 1, counters: counters) {
            let hanging = first.exchange(false, ordering: .sequentiallyConsistent)
            return .success(
                FakeWorker(answers: [hanging ? FakeWorker.hang : .reply(Self.ok)], counter: counters))
        }
        let hung = await pool.call(
            library: "/lib/libx.so", plugin: "x", request: [],
            teardown: Teardown(timeout: .seconds(2), killGrace: .zero))
        #expect(hung.outcome == .timeout)
        #expect(hung.end == .timedOut(after: .seconds(2)))
        #expect(hung.end.words == "timeout after 2s")
        #expect(await Self.call(pool).outcome == .succeeded)
        #expect(counters.starts == 2)
    }

    /// The attempt's timeout counts from the moment it has a worker slot, the worker's start
    /// included: one that passes while its worker is still starting (a loaded machine) says how
    /// long it was, like any timeout (it said `timeout after ?`), and not that it was starting.
    @Test func aTimeoutWhileTheWorkerStartsSaysHowLongItWas() async {
        let counters = Counters()
        let pool = Self.pool(capacity: 1, counters: counters) {
            .success(FakeWorker(hello: FakeWorker.hang, answers: [], counter: counters))
        }
        let late = await pool.call(
            library: "/lib/libx.so", plugin: "x", request: [],
            teardown: Teardown(timeout: .seconds(1), killGrace: .zero))
        #expect(late.outcome == .timeout)
        #expect(late.end == .timedOut(after: .seconds(1)))
    }

    @Test func aWorkerThatCannotStartFailsTheAttemptWithTheReason() async {
        let counters = Counters()
        let pool = Self.pool(capacity: 2, counters: counters) {
            .failure(PluginWorkerStartError(reason: "no such file"))
        }
        let result = await Self.call(pool)
        #expect(result.outcome == .failed)
        #expect(result.end == .cannotStart(.pluginProcess(.worker, "no such file")))
        #expect(result.end.words == "cannot start the plugin's worker: no such file")
        // The slot is free again: the next call tries again.
        _ = await Self.call(pool)
        _ = await Self.call(pool)
        #expect(counters.starts == 3)
    }

    @Test func aWorkerThatCannotLoadThePluginFailsTheAttemptWithTheReason() async {
        let counters = Counters()
        let pool = Self.pool(capacity: 1, counters: counters) {
            .success(
                FakeWorker(hello: .reply(Array("cannot load libx.so".utf8)), answers: [], counter: counters))
        }
        let result = await Self.call(pool)
        #expect(result.outcome == .failed)
        #expect(result.end == .cannotStart(.pluginNotLoaded("cannot load libx.so")))
        #expect(result.end.words == "the plugin's worker cannot load it: cannot load libx.so")
        #expect(counters.stops == 1)
        let died = Self.pool(capacity: 1, counters: counters) {
            .success(FakeWorker(hello: .exited(3), answers: [], counter: counters))
        }
        let exited = await Self.call(died)
        #expect(exited.end == .crashed(.init(.worker, .exited(3), beforeReady: true)))
        #expect(exited.end.words == "the plugin's worker exited 3 before it was ready")
    }

    @Test func shuttingDownStopsIdleWorkersAndTurnsCallsAway() async {
        let counters = Counters()
        let pool = Self.pool(capacity: 2, counters: counters) {
            .success(FakeWorker(answers: [.reply(Self.ok)], counter: counters))
        }
        #expect(await Self.call(pool).outcome == .succeeded)
        await pool.shutDown()
        #expect(counters.stops == 1)
        #expect(await Self.call(pool).outcome == .interrupted)
    }
}
