import CJobRunnerSystem
import Foundation
import Glibc
import JobRunnerCore

/// Waits for the output and the end of the children ``ChildProcess`` starts itself, on one
/// thread of its own that sleeps in `epoll_wait` on each child's process descriptor and
/// standard output pipe.
///
/// A child's end reaches its caller through one wake-up of this thread and one resumed
/// continuation, where swift-subprocess takes two threads (one for the pipe, one for the
/// process) and a hop through the cooperative pool for each: that path was most of the time
/// between a job's exit and the start of the next one in a chain of short jobs.
///
/// Output is read as it arrives and handed to the child's ``ChildProcess/Output`` on this
/// thread. Once the main process has exited, what is left in the pipe is read and the read
/// stops, even when a process it left behind still holds the pipe, as swift-subprocess does.
final class ChildWatcher: Sendable {
    /// The watcher of this process; nil where the kernel has no process descriptors (before
    /// Linux 5.3) or waitid cannot take one (before 5.4), or epoll or the thread cannot be
    /// had: children are then started through swift-subprocess.
    static let shared: ChildWatcher? = ChildWatcher()

    /// How a child's main process ended.
    enum Status: Sendable, Hashable {
        case exited(Int32)
        case signalled(Int32)
    }

    /// What one reap without waiting found.
    enum Reaped: Sendable, Hashable {
        case ended(Status)
        /// The process has not ended, or not so that it can be reaped yet (its descriptor can be
        /// readable before that: a zombie a debugger traces is the tracer's to reap first).
        case notYet
        /// waitid failed with this error number: someone else reaped the process.
        case failed(Int32)
    }

    /// The two calls about a child's end that the watcher makes to the kernel. Tests replace
    /// them to play a kernel older than 5.4 or a reap that finds nothing yet, which a test
    /// cannot make the kernel do; this is the only seam, and ``system`` is what runs.
    struct Kernel: Sendable {
        /// The error number waitid(P_PIDFD, pidfd, WEXITED | WNOHANG | WNOWAIT) fails with, or
        /// 0 (``jobrunner_pidfd_wait_probe``).
        var probeWait: @Sendable (_ pidfd: Int32) -> Int32
        /// Reaps the process behind a descriptor without waiting.
        var reap: @Sendable (_ pidfd: Int32) -> Reaped

        static let system = Kernel(
            probeWait: { jobrunner_pidfd_wait_probe($0) },
            reap: { pidfd in
                var exited: Int32 = 0
                var value: Int32 = 0
                switch jobrunner_reap(pidfd, &exited, &value) {
                case 1: return .ended(exited == 1 ? .exited(value) : .signalled(value))
                case 0: return .notYet
                default: return .failed(errno)
                }
            })
    }

    /// A child handed over by a caller, taken up by the thread at its next wake-up.
    private struct Registration: Sendable {
        var pidfd: Int32
        var pipe: Int32
        var output: ChildProcess.Output
        var clock: any RunnerClock
        var continuation: CheckedContinuation<(Status, [UInt8], Date)?, Never>
    }

    private let epoll: Int32
    private let kernel: Kernel
    private let pending = Locked<[Registration]>([])

    /// Nil when `kernel` lacks what the watcher needs. Each watcher has a thread of its own for
    /// as long as the process lives: only tests make one besides ``shared``.
    init?(kernel: Kernel = .system) {
        // Probes with this process's own descriptor: pidfd_open (Linux 5.3) must work, and
        // waitid must take the descriptor (5.4), answering ECHILD since this is no child of
        // its own. A kernel that does not know P_PIDFD answers EINVAL, and could reap none.
        let probe = jobrunner_pidfd_open(getpid())
        guard probe >= 0 else { return nil }
        let answer = kernel.probeWait(probe)
        close(probe)
        guard answer == 0 || answer == ECHILD else { return nil }
        self.kernel = kernel
        epoll = jobrunner_epoll_create()
        guard epoll >= 0 else { return nil }
        // Lives as long as the process, and so does this thread.
        let thread = Thread { self.loop() }
        thread.name = "jobrunner-children"
        thread.start()
    }

    /// Waits for the main process behind `pidfd` to end, reading `pipe` (non-blocking, its
    /// write end closed in this process) into `output` meanwhile; closes both, reaps the
    /// process and returns how it ended with the output kept (empty for a stream), and when
    /// its end was seen on `clock`. Nil at once, with nothing closed, when epoll refuses either
    /// descriptor (no memory, or the user's limit on watched descriptors): the caller ends the
    /// child rather than wait for an end that would never be seen.
    func wait(pidfd: Int32, pipe: Int32, output: ChildProcess.Output, clock: any RunnerClock) async -> (
        Status, [UInt8], Date
    )? {
        await withCheckedContinuation { continuation in
            // Added to epoll under the lock the thread takes after every wake-up, before it
            // looks at an event: any descriptor it hears of is in its registrations by then.
            let watched = pending.withLock { list -> Bool in
                guard jobrunner_epoll_add(epoll, pipe) == 0 else { return false }
                guard jobrunner_epoll_add(epoll, pidfd) == 0 else {
                    _ = jobrunner_epoll_remove(epoll, pipe)
                    return false
                }
                list.append(
                    Registration(
                        pidfd: pidfd, pipe: pipe, output: output, clock: clock, continuation: continuation))
                return true
            }
            if !watched { continuation.resume(returning: nil) }
        }
    }

    /// One child being watched, owned by the watcher's thread.
    private final class Watched {
        let pidfd: Int32
        var pipe: Int32
        let output: ChildProcess.Output
        var kept: [UInt8] = []
        let clock: any RunnerClock
        let continuation: CheckedContinuation<(Status, [UInt8], Date)?, Never>
        /// When its descriptor first said the process ended.
        var endSeen: Date?

        init(_ registration: Registration) {
            pidfd = registration.pidfd
            pipe = registration.pipe
            output = registration.output
            clock = registration.clock
            continuation = registration.continuation
        }
    }

    /// How long the thread waits before it tries again to reap children whose descriptor said
    /// they ended but that could not be reaped yet. Their descriptors stay readable, so they
    /// are out of epoll meanwhile, which would otherwise wake the thread without pause.
    static let reapRetryMilliseconds: Int32 = 10

    private func loop() {
        var ready = [Int32](repeating: -1, count: 64)
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var byProcess: [Int32: Watched] = [:]
        var byPipe: [Int32: Watched] = [:]
        var unreaped: [Watched] = []
        while true {
            let timeout = unreaped.isEmpty ? -1 : Self.reapRetryMilliseconds
            let count = jobrunner_epoll_wait(epoll, &ready, Int32(ready.count), timeout)
            if count < 0 {
                if errno == EINTR { continue }
                fatalError("epoll_wait failed: \(String(cString: strerror(errno)))")
            }
            for registration in pending.withLock({ list in
                defer { list = [] }
                return list
            }) {
                let watched = Watched(registration)
                byProcess[watched.pidfd] = watched
                byPipe[watched.pipe] = watched
            }
            unreaped.removeAll { finishIfReaped($0, buffer: &buffer, byPipe: &byPipe) }
            for fd in ready[0..<Int(count)] {
                if let watched = byProcess.removeValue(forKey: fd) {
                    if watched.endSeen == nil { watched.endSeen = watched.clock.now() }
                    if !finishIfReaped(watched, buffer: &buffer, byPipe: &byPipe) {
                        _ = jobrunner_epoll_remove(epoll, watched.pidfd)
                        unreaped.append(watched)
                    }
                } else if let watched = byPipe[fd] {
                    // A few buffers at a time: the pipe stays ready, and a child that writes
                    // without pause must not keep the others' ends from being seen.
                    if Self.read(watched, into: &buffer, atMost: Self.readPerWakeUp) {
                        Self.closePipe(of: watched, epoll: epoll)
                        byPipe[fd] = nil
                    }
                }
            }
        }
    }

    /// Reaps the child whose descriptor said it ended and hands its end over; false, with
    /// nothing changed, while it cannot be reaped yet: it is not taken for a crash, and its
    /// output is still read.
    private func finishIfReaped(_ watched: Watched, buffer: inout [UInt8], byPipe: inout [Int32: Watched])
        -> Bool
    {
        let status: Status
        switch kernel.reap(watched.pidfd) {
        case .notYet: return false
        case .ended(let ended): status = ended
        // Someone else reaped it: how it ended is lost, and it reads as a crash with no signal.
        case .failed: status = .signalled(0)
        }
        // The main process ended: what it wrote is in the pipe already, and only that is read;
        // a leftover still writing is not waited for.
        let pipe = watched.pipe
        if pipe >= 0 {
            let held = max(0, Int(jobrunner_pipe_holds(pipe)))
            _ = Self.read(watched, into: &buffer, atMost: held)
            byPipe[pipe] = nil
            Self.closePipe(of: watched, epoll: epoll)
        }
        _ = jobrunner_epoll_remove(epoll, watched.pidfd)
        close(watched.pidfd)
        watched.continuation.resume(returning: (status, watched.kept, watched.endSeen ?? watched.clock.now()))
        return true
    }

    /// Bytes read from one child's pipe at one wake-up while its main process runs.
    static let readPerWakeUp = 256 << 10

    /// Reads up to `limit` bytes from the pipe, stopping early when it is empty; true at its
    /// end or on an error, when the caller closes it.
    private static func read(_ watched: Watched, into buffer: inout [UInt8], atMost limit: Int) -> Bool {
        var left = limit
        while left > 0 {
            let wanted = min(left, buffer.count)
            let count = buffer.withUnsafeMutableBytes { Glibc.read(watched.pipe, $0.baseAddress, wanted) }
            if count > 0 {
                left -= count
                buffer.withUnsafeBytes { bytes in
                    let piece = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
                    switch watched.output {
                    case .stream(let sink):
                        sink(piece)
                    case .keep(let limit):
                        watched.kept.append(contentsOf: piece)
                        if watched.kept.count > limit { watched.kept.removeFirst(watched.kept.count - limit) }
                    }
                }
                continue
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return false }
            return true
        }
        return false
    }

    /// Removed from epoll before it is closed: a child being spawned elsewhere may hold a copy
    /// for a moment, which would keep a closed descriptor's registration alive.
    private static func closePipe(of watched: Watched, epoll: Int32) {
        _ = jobrunner_epoll_remove(epoll, watched.pipe)
        close(watched.pipe)
        watched.pipe = -1
    }
}
