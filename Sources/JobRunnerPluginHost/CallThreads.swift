import DequeModule
import Foundation

/// The threads that in-process plugin calls block: a fixed number of them, each running one
/// call at a time; calls beyond them wait for a thread, in order.
///
/// Handing a call to a sleeping thread means waking it (a futex wake), and when the runner's
/// loop did that once per call it spent a fifth of its time there. Here whoever hands calls
/// over wakes a thread only when no wake is already on its way; the thread that wakes takes one
/// call and, while more wait and another thread sleeps, wakes the next itself. The loop that
/// hands over the starts of a batch of attempts pays for one wake; the threads wake each other.
public final class CallThreads: @unchecked Sendable {
    // @unchecked: every member below `count` is guarded by `mutex`.

    /// A call: `true` when it runs on one of the threads, `false` when the threads are stopped
    /// (or not started) and it must end without running.
    public typealias Work = @Sendable (_ running: Bool) -> Void

    private enum Phase { case created, running, stopped }

    /// How many threads run calls.
    public let count: Int
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wakeUp = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var phase = Phase.created
    private var queue = Deque<Work>()
    /// Threads waiting for a call.
    private var sleeping = 0
    /// A sleeping thread was woken and has not taken the lock since: the next call waits for
    /// it rather than waking another.
    private var waking = false

    /// Threads for `count` calls at once (at least 1); none run before ``start()``.
    public init(count: Int) {
        self.count = max(count, 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(wakeUp, nil)
    }

    deinit {
        pthread_cond_destroy(wakeUp)
        pthread_mutex_destroy(mutex)
        wakeUp.deallocate()
        mutex.deallocate()
    }

    /// Starts the threads; does nothing once started or stopped.
    public func start() {
        let starting = locked {
            guard phase == .created else { return false }
            phase = .running
            return true
        }
        guard starting else { return }
        for index in 0..<count {
            // Each thread keeps the threads alive until it ends.
            let context = Unmanaged.passRetained(Context(threads: self, index: index)).toOpaque()
            var thread = pthread_t()
            let created = pthread_create(
                &thread, nil,
                { context in
                    guard let context else { return nil }
                    let box = Unmanaged<Context>.fromOpaque(context).takeRetainedValue()
                    box.threads.serve(index: box.index)
                    return nil
                }, context)
            if created == 0 {
                pthread_detach(thread)
            } else {
                Unmanaged<Context>.fromOpaque(context).release()
            }
        }
    }

    /// Runs `work` on a thread once one is free; at once with `false` when the threads are not
    /// running.
    public func submit(_ work: @escaping Work) {
        let (accepted, wake) = locked { () -> (Bool, Bool) in
            guard phase == .running else { return (false, false) }
            queue.append(work)
            return (true, wakeOneIfNeeded())
        }
        if wake { pthread_cond_signal(wakeUp) }
        if !accepted { work(false) }
    }

    /// Stops the threads without waiting for them: a call under way runs to its end (its
    /// thread ends then), calls still waiting end at once with `false`, later ones too.
    public func stop() {
        let dropped = locked { () -> Deque<Work> in
            phase = .stopped
            defer { queue = [] }
            return queue
        }
        pthread_cond_broadcast(wakeUp)
        for work in dropped { work(false) }
    }

    private final class Context {
        let threads: CallThreads
        let index: Int
        init(threads: CallThreads, index: Int) {
            self.threads = threads
            self.index = index
        }
    }

    /// One thread's life: takes calls until the threads are stopped.
    private func serve(index: Int) {
        Thread.current.name = "plugin-#\(index)"
        pthread_mutex_lock(mutex)
        while phase == .running {
            guard let work = queue.popFirst() else {
                sleeping += 1
                pthread_cond_wait(wakeUp, mutex)
                sleeping -= 1
                waking = false
                continue
            }
            // More calls wait: the next sleeping thread is woken from here, not by the caller.
            let wake = wakeOneIfNeeded()
            pthread_mutex_unlock(mutex)
            if wake { pthread_cond_signal(wakeUp) }
            work(true)
            pthread_mutex_lock(mutex)
        }
        pthread_mutex_unlock(mutex)
    }

    /// Whether a sleeping thread must be woken for the calls waiting; marks it as on its way.
    /// Called with the lock held.
    private func wakeOneIfNeeded() -> Bool {
        guard !queue.isEmpty, sleeping > 0, !waking else { return false }
        waking = true
        return true
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}
