import Synchronization

/// Messages for one consumer, taken in batches: everything that arrived since it last looked.
///
/// An `AsyncStream` hands its consumer one element per `next()`, and each `next()` is a
/// suspension and a hop through the executor even when elements are waiting: with 20,000 quick
/// attempts ending, that hop cost about as much as handling the message. Here the consumer
/// takes every waiting message at once and is woken only when it waits on an empty mailbox.
///
/// A message sent with ``yieldFirst(_:)`` goes before every other one still waiting, and the
/// consumer can pick such messages up in the middle of a batch (``takeFirst()``): the store's
/// "durable" answer lets the next commit go, and behind thousands of attempt ends it held the
/// store idle until they were all handled.
final class Mailbox<Message: Sendable>: Sendable {
    private struct State {
        var first: [Message] = []
        var messages: [Message] = []
        var waiter: CheckedContinuation<[Message]?, Never>?
        /// The consumer's task was cancelled: no more batches.
        var cancelled = false

        /// The waiting messages, those sent first before the rest, leaving none; nil when
        /// there are none.
        mutating func take() -> [Message]? {
            guard !messages.isEmpty || !first.isEmpty else { return nil }
            defer {
                first = []
                messages = []
            }
            return first.isEmpty ? messages : first + messages
        }
    }

    private let state = Locked(State())
    /// Whether `first` may hold messages: looked at without the lock, between messages.
    private let hasFirst = Atomic<Bool>(false)

    /// Adds a message; wakes the consumer if it waits. Safe from any thread.
    func yield(_ message: Message) {
        let waiter = state.withLock { state -> CheckedContinuation<[Message]?, Never>? in
            guard let waiter = state.waiter else {
                state.messages.append(message)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: [message])
    }

    /// Adds a message that goes before those waiting; wakes the consumer if it waits.
    func yieldFirst(_ message: Message) {
        let waiter = state.withLock { state -> CheckedContinuation<[Message]?, Never>? in
            guard let waiter = state.waiter else {
                state.first.append(message)
                hasFirst.store(true, ordering: .releasing)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: [message])
    }

    /// The messages sent with ``yieldFirst(_:)`` since the last look, in order; cheap when
    /// there are none.
    func takeFirst() -> [Message] {
        guard hasFirst.load(ordering: .acquiring) else { return [] }
        return state.withLock { state in
            hasFirst.store(false, ordering: .relaxed)
            defer { state.first = [] }
            return state.first
        }
    }

    /// Every message that arrived since the last call, in order (those sent first before the
    /// rest), waiting for one if there is none; nil once the calling task is cancelled (as an
    /// `AsyncStream` ends). One consumer.
    func next() async -> [Message]? {
        if let ready = state.withLock({ take(&$0) }) { return ready }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[Message]?, Never>) in
                let ready = state.withLock { state -> [Message]?? in
                    if state.cancelled { return .some(nil) }
                    if let batch = take(&state) { return batch }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<[Message]?, Never>? in
                state.cancelled = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    private func take(_ state: inout State) -> [Message]? {
        hasFirst.store(false, ordering: .relaxed)
        return state.take()
    }
}
