import Foundation

/// Which came first for an attempt's work: its own end, its deadline, or a stop (``Teardown``).
/// The first one decides; later ones change nothing. Used the same way by every way an attempt
/// runs: a child process, a call on a plugin's worker, an in-process plugin call.
///
/// Whoever runs the work ``arm(_:clock:)``s the watch once the work has started, calls
/// ``finish(_:at:)`` when it ends, and ``interrupt()`` when the runner stops it; the end is had
/// by awaiting ``end`` or, for work on threads of its own, through ``onEnd(_:)``.
public final class AttemptWatch<Value: Sendable>: Sendable {
    /// What came first.
    public enum End: Sendable {
        /// The work ended by itself, before its deadline, with this.
        case finished(Value)
        /// The policy stopped it: its deadline passed (or it ended at or after it), or the runner
        /// stopped it.
        case stopped(Teardown.Stop)
    }

    private struct State {
        var end: End?
        var deadline: Deadline?
        var timer: Task<Void, Never>?
        var waiters: [CheckedContinuation<End, Never>] = []
        var observer: (@Sendable (End) -> Void)?
    }

    private let state = Locked(State())

    /// A watch with no deadline yet.
    public init() {}

    /// Starts the deadline's timer: once `deadline` has passed on `clock`, the watch ends
    /// ``Teardown/Stop/timedOut(after:)`` unless it has ended already. Nil: the work has no
    /// deadline. Called once, when the work starts.
    public func arm(_ deadline: Deadline?, clock: any RunnerClock) {
        guard let deadline else { return }
        // Unstructured: the timer outlives the caller's frame until the deadline or the watch's
        // end, whichever comes first; the end cancels it.
        let timer = Task {
            if (try? await clock.sleep(until: deadline.date)) != nil {
                self.settle(.stopped(.timedOut(after: deadline.timeout)))
            }
        }
        let ended = state.withLock { state -> Bool in
            state.deadline = deadline
            guard state.end == nil else { return true }
            state.timer = timer
            return false
        }
        if ended { timer.cancel() }
    }

    /// The work ended by itself with `value`, at `endedAt` on the clock (nil: not known): a
    /// timeout all the same when that is at or after its deadline. `endedAt` is asked only when
    /// there is a deadline.
    public func finish(_ value: Value, at endedAt: @autoclosure () -> Date?) {
        let deadline = state.withLock { $0.deadline }
        if let deadline, let endedAt = endedAt(), deadline.isMissed(by: endedAt) {
            settle(.stopped(.timedOut(after: deadline.timeout)))
        } else {
            settle(.finished(value))
        }
    }

    /// The runner stops the work.
    public func interrupt() {
        settle(.stopped(.interrupted))
    }

    /// Whether it has ended.
    public var isEnded: Bool { state.withLock { $0.end != nil } }

    /// What came first; waits for it.
    public var end: End {
        get async {
            await withCheckedContinuation { continuation in
                let known = state.withLock { state -> End? in
                    if let end = state.end { return end }
                    state.waiters.append(continuation)
                    return nil
                }
                if let known { continuation.resume(returning: known) }
            }
        }
    }

    /// Calls `body` once with what came first, on the thread that ended the watch, or at once
    /// when it has ended already. At most one such observer.
    public func onEnd(_ body: @escaping @Sendable (End) -> Void) {
        let known = state.withLock { state -> End? in
            if let end = state.end { return end }
            state.observer = body
            return nil
        }
        if let known { body(known) }
    }

    private func settle(_ end: End) {
        let taken = state.withLock {
            state -> (Task<Void, Never>?, [CheckedContinuation<End, Never>], (@Sendable (End) -> Void)?)? in
            guard state.end == nil else { return nil }
            state.end = end
            defer {
                state.timer = nil
                state.waiters = []
                state.observer = nil
            }
            return (state.timer, state.waiters, state.observer)
        }
        guard let (timer, waiters, observer) = taken else { return }
        timer?.cancel()
        for waiter in waiters { waiter.resume(returning: end) }
        observer?(end)
    }
}

extension AttemptWatch.End where Value == AttemptResult {
    /// The attempt's result: the work's own, or the policy's end for work it stopped.
    public var result: AttemptResult {
        switch self {
        case .finished(let result): result
        case .stopped(let stop): AttemptResult(stop.end)
        }
    }
}
