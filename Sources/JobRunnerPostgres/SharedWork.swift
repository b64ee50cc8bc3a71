import Foundation
import JobRunnerCore
import Synchronization

/// The deciding runner's handler when hosts share the attempts: an attempt is queued as a row,
/// and its result awaited until the host that claimed it completes it. A cancelled task (a
/// stop, an operator's `cancel`) asks that host to end it; the result is still awaited, as a
/// local handler's would be.
struct QueueingHandler: JobHandler {
    let queue: AttemptQueue
    let board: ResultBoard
    let logDirectory: String

    func run(_ request: AttemptRequest) async -> AttemptResult {
        let shared = SharedRequest(request, logDirectory: logDirectory)
        let queued = Shared<Int64?>(nil)
        let cancelled = Shared(false)
        let queue = self.queue
        return await withTaskCancellationHandler {
            // The store may be out of reach for a while (restarted): queueing is tried again
            // each second until it takes, or the attempt is no longer wanted.
            var id: Int64?
            while id == nil {
                if cancelled.value.withLock({ $0 }) {
                    return AttemptResult(.interrupted(.runnerStoppedBeforeStart))
                }
                id = try? await queue.queue(shared)
                if id == nil { try? await Task.sleep(for: .seconds(1)) }
            }
            guard let id else { return AttemptResult(.interrupted(.runnerStoppedBeforeStart)) }
            let wasCancelled = queued.value.withLock { queued in
                queued = id
                return cancelled.value.withLock { $0 }
            }
            if wasCancelled { await Self.cancel(id, queue) }
            return await board.result(of: id)
        } onCancel: {
            let id = queued.value.withLock { id in
                cancelled.value.withLock { $0 = true }
                return id
            }
            if let id { Task { await Self.cancel(id, queue) } }
        }
    }

    /// Asks for the attempt's end until the store takes the request.
    private static func cancel(_ id: Int64, _ queue: AttemptQueue) async {
        while (try? await queue.cancel(id: id)) == nil {
            try? await Task.sleep(for: .seconds(1))
        }
    }
}

/// The results the deciding runner waits for: read when a host's completion notifies
/// `jobrunner_done`, and at least every second besides (a notification lost while the
/// listening connection was down).
final class ResultBoard: Sendable {
    private struct State {
        var waiting: [Int64: CheckedContinuation<AttemptResult, Never>] = [:]
        var reader: Task<Void, Never>?
    }
    private let state = Mutex(State())
    private let queue: AttemptQueue
    private let heard = Followers()
    private let listener: NotificationListener

    init(queue: AttemptQueue) {
        self.queue = queue
        let heard = self.heard
        listener = NotificationListener(
            url: queue.store.url, channel: Channels.done, logger: queue.store.logger
        ) { heard.wake() }
    }

    deinit {
        listener.stop()
        state.withLock { $0.reader }?.cancel()
    }

    func result(of id: Int64) async -> AttemptResult {
        await withCheckedContinuation { continuation in
            state.withLock { state in
                state.waiting[id] = continuation
                if state.reader == nil { state.reader = Task { await self.read() } }
            }
            heard.wake()
        }
    }

    /// Takes the results there are for the attempts waited for, until none is waited for (a
    /// new wait starts it again).
    private func read() async {
        while true {
            let generation = heard.generation
            let ids: [Int64] = state.withLock { state in
                if state.waiting.isEmpty { state.reader = nil }
                return Array(state.waiting.keys)
            }
            if ids.isEmpty { return }
            if let results = try? await queue.takeResults(ids) {
                let ready = state.withLock { state in
                    results.compactMap { id, result in
                        state.waiting.removeValue(forKey: id).map { ($0, result) }
                    }
                }
                for (continuation, result) in ready { continuation.resume(returning: result) }
            }
            await heard.wait(since: generation, atMost: .seconds(1))
        }
    }
}

extension Followers {
    /// Returns at the first wake-up after `generation`, or after `limit`.
    func wait(since generation: UInt64, atMost limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait(since: generation) }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
    }
}
