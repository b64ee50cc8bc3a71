import DequeModule
import Foundation

/// How many child processes this runner has at once, across every kind of attempt.
///
/// Each child costs the runner a few file descriptors (pipes, the attempt's log), and a runner
/// told `maxConcurrent: 0` over 20,000 jobs would otherwise try to start them all together and
/// run out of descriptors. Attempts beyond the limit wait here, in order, before they spawn;
/// their timeouts start when they do.
///
/// One limiter serves a whole runner: the command line makes it and hands it to every handler
/// that starts children, rather than each reaching for a global.
public actor ChildSlots {
    /// The capacity for this process's soft limit on open files (`ulimit -n`).
    public static var defaultCapacity: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        // RLIM_INFINITY is all ones: clamping makes it Int.max, and the cap keeps it sensible.
        return capacity(forOpenFileLimit: Int(clamping: limit.rlim_cur))
    }

    /// An eighth of `limit`, less a reserve for the store and the runner's own files; at least
    /// 8, at most 65,536.
    public static func capacity(forOpenFileLimit limit: Int) -> Int {
        min(max(8, (limit - 256) / 8), 65_536)
    }

    /// How many children may run at once.
    public nonisolated let capacity: Int
    private var available: Int
    private var waiting = Deque<CheckedContinuation<Void, Never>>()

    /// A limiter of `capacity` slots (at least one), like ``defaultCapacity``.
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        available = self.capacity
    }

    /// Runs `body` holding one slot, waiting for one first if all are taken.
    public nonisolated func withSlot<T>(_ body: () async -> sending T) async -> sending T {
        await acquire()
        let result = await body()
        await release()
        return result
    }

    private func acquire() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        guard let next = waiting.popFirst() else {
            available += 1
            return
        }
        next.resume()
    }
}
