import Foundation
import JobRunnerCore
import Synchronization

/// One host's worker: claims queued attempts while it has free slots, runs each with the
/// host's own handlers, renews its leases every heartbeat, and completes each attempt under the
/// fencing number of its claim.
///
/// - A completion the store refuses (the lease was lost and the attempt claimed again)
///   changes nothing.
/// - An attempt the host no longer holds at a renewal (rescued by another host) or that an
///   operator cancelled is ended here.
/// - When the host cannot renew (the database is out of reach), it stops claiming, and when
///   its last renewal's lease ends it ends its attempts itself, `grace` before any other host
///   may take them back.
/// - Every heartbeat, it also puts back in the queue the attempts of hosts whose lease ended
///   more than `grace` ago.
final class AttemptWorker: AttemptWorking {
    private struct Running {
        var fencing: Int64
        var task: Task<Void, Never>
    }
    private struct State {
        var running: [Int64: Running] = [:]
        var completed = 0
        var stopping = false
        /// Attempts whose task ended before it was recorded as running.
        var endedEarly: Set<Int64> = []
    }
    private let state = Mutex(State())
    private let queue: AttemptQueue
    private let host: String
    private let timing: LeaseTiming
    private let handler: any JobHandler
    private let jobs: @Sendable (String) -> JobDefinition?
    private let logDirectory: String
    private let slots: Int
    private let wakes = Followers()
    private let listener: NotificationListener
    private let loop = Mutex<Task<Void, Never>?>(nil)

    init(
        queue: AttemptQueue, host: String, timing: LeaseTiming, handler: any JobHandler,
        jobs: @escaping @Sendable (String) -> JobDefinition?, logDirectory: String, slots: Int
    ) {
        self.queue = queue
        self.host = host
        self.timing = timing
        self.handler = handler
        self.jobs = jobs
        self.logDirectory = logDirectory
        self.slots = max(1, slots)
        let wakes = self.wakes
        listener = NotificationListener(
            url: queue.store.url, channel: Channels.queued, logger: queue.store.logger
        ) { wakes.wake() }
        loop.withLock { $0 = Task { await self.work() } }
    }

    var completed: Int { state.withLock { $0.completed } }

    func stop() async {
        let tasks = state.withLock { state in
            state.stopping = true
            return state.running.values.map(\.task)
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        loop.withLock { $0 }?.cancel()
        await loop.withLock { $0 }?.value
        listener.stop()
        _ = try? await queue.heartbeat(host: host, running: 0, completed: completed)
    }

    private func work() async {
        let clock = ContinuousClock()
        var lastRenewal = clock.now
        var nextHeartbeat = clock.now
        while !Task.isCancelled, !state.withLock({ $0.stopping }) {
            let generation = wakes.generation
            if clock.now >= nextHeartbeat {
                nextHeartbeat = clock.now + timing.heartbeat
                if await renew() { lastRenewal = clock.now }
            }
            let reachable = clock.now - lastRenewal < timing.lease
            if !reachable {
                // Cut off past the lease: another host may take these attempts `grace` from
                // now; they end here first.
                endAll()
            } else {
                await claimWhatFits()
                await endCancelled()
            }
            let untilHeartbeat = nextHeartbeat - clock.now
            await wakes.wait(
                since: generation, atMost: min(.seconds(1), max(.milliseconds(10), untilHeartbeat)))
        }
    }

    /// Renews the leases and records the heartbeat; ends what is no longer this host's.
    /// Returns whether the store answered.
    private func renew() async -> Bool {
        guard let held = try? await queue.renew(host: host, lease: timing.lease) else { return false }
        let lost = state.withLock { state in
            state.running.filter { id, running in
                guard let row = held[id] else { return true }
                return row.fencing != running.fencing || row.cancel
            }.map(\.value.task)
        }
        for task in lost { task.cancel() }
        let (running, completed) = state.withLock { ($0.running.count, $0.completed) }
        _ = try? await queue.heartbeat(host: host, running: running, completed: completed)
        _ = try? await queue.rescue(grace: timing.grace)
        return true
    }

    private func claimWhatFits() async {
        let free = slots - state.withLock { $0.running.count }
        guard free > 0, let claimed = try? await queue.claim(host: host, limit: free, lease: timing.lease)
        else {
            return
        }
        for attempt in claimed { start(attempt) }
    }

    /// Ends the attempts an operator cancelled (read each time round, within a second).
    private func endCancelled() async {
        guard state.withLock({ !$0.running.isEmpty }),
            let cancelled = try? await queue.cancelled(host: host), !cancelled.isEmpty
        else { return }
        let tasks = state.withLock { state in
            cancelled.compactMap { id, fencing in
                state.running[id].flatMap { $0.fencing == fencing ? $0.task : nil }
            }
        }
        for task in tasks { task.cancel() }
    }

    private func endAll() {
        for task in state.withLock({ $0.running.values.map(\.task) }) { task.cancel() }
    }

    private func start(_ claimed: ClaimedAttempt) {
        let handler = self.handler
        let queue = self.queue
        let shared = claimed.request
        let job = jobs(shared.jobID)
        let request = job.map { shared.request(job: $0, logDirectory: logDirectory) }
        let host = self.host
        let lease = timing.lease
        let task = Task.detached { [weak self] in
            var result: AttemptResult
            if let request {
                let folder = (request.logPath as NSString).deletingLastPathComponent
                try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                result = await handler.run(request)
            } else {
                result = AttemptResult(
                    .cannotStart(
                        .notForHandler(
                            "host \(host) has no job \(shared.jobID) in its job files; every host must serve the same job files"
                        )))
            }
            // Completed under the claim's fencing number; tried again while the store is out of
            // reach, for as long as the lease could still hold. In a task of its own: this one is
            // cancelled when the attempt is (an operator's cancel), and a cancelled task's query
            // fails at once, which left a cancelled attempt's row running for ever.
            let outcome = result
            let taken = await Task.detached { () -> Bool in
                let giveUp = ContinuousClock.now + lease
                while ContinuousClock.now < giveUp {
                    if let answer = try? await queue.complete(
                        id: claimed.id, fencing: claimed.fencing, outcome)
                    {
                        return answer
                    }
                    try? await Task.sleep(for: .seconds(1))
                }
                return false
            }.value
            self?.finished(claimed.id, taken: taken)
        }
        state.withLock { state in
            if state.endedEarly.remove(claimed.id) == nil {
                state.running[claimed.id] = Running(fencing: claimed.fencing, task: task)
            }
        }
    }

    private func finished(_ id: Int64, taken: Bool) {
        state.withLock { state in
            if state.running.removeValue(forKey: id) == nil { state.endedEarly.insert(id) }
            if taken { state.completed += 1 }
        }
        wakes.wake()
    }
}
