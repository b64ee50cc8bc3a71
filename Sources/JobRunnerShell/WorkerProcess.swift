import CJobRunnerSystem
import Foundation
import Glibc
import JobRunnerCore

/// A long-lived child process that answers one frame (``WorkerFrames``) with another, one
/// exchange at a time: a persistent plugin worker (`isolation: process`).
///
/// The child reads frames on its standard input and writes its answers on its standard output;
/// its standard error goes to /dev/null (the worker itself sends what a call writes where the
/// call says). It leads a process group of its own, which a deadline or a cancelled exchange
/// ends by the attempts' one ``Teardown`` policy, as ``ChildProcess`` does: SIGTERM, then SIGKILL
/// after the grace period. Only the runner
/// holds the other ends of its pipes (they are close-on-exec), so when the runner exits, however
/// it dies, the worker reads the end of its input and exits too.
public final class WorkerProcess: Sendable {
    /// How the process ended.
    public enum Termination: Sendable, Hashable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)
        /// It could not be started; the text says why.
        case failedToStart(String)
    }

    /// How one exchange ended.
    public enum Exchange: Sendable, Hashable {
        /// The worker answered with this frame.
        case reply([UInt8])
        /// The worker ended (or closed its output) before it answered: how it ended.
        case ended(Termination)
        /// The teardown policy ended the worker's group: the deadline passed (or the answer came
        /// at or after it), or the caller was cancelled.
        case stopped(Teardown.Stop)
        /// The worker announced a frame longer than ``WorkerFrames/maximumLength``; its group
        /// was ended.
        case tooLarge(Int)
    }

    /// The worker's pid, which is also its process group's id.
    public let pid: Int32
    private let clock: any RunnerClock
    private let channel: FrameChannel
    private let ended: Latch<Termination>

    private init(pid: Int32, clock: any RunnerClock, channel: FrameChannel, ended: Latch<Termination>) {
        self.pid = pid
        self.clock = clock
        self.channel = channel
        self.ended = ended
    }

    /// Starts `program` with `arguments` (environment: the runner's); returns once it exists,
    /// or how it failed to start.
    ///
    /// Spawned with posix_spawn, as ``ChildProcess`` starts a child directly, and reaped by a
    /// thread of its own that waits for it: a worker lives as long as the run, and a wait for its
    /// end must hold no thread of the cooperative pool. (Through swift-subprocess, a worker
    /// started while descriptors ran out was reaped by a blocking wait on that pool, and two
    /// such workers stopped every task of the runner on a two-core machine.) Every descriptor
    /// the child gets is made and closed here, /dev/null too: with descriptors running out, the
    /// start fails with a sentence.
    public static func start(
        program: String, arguments: [String], clock: any RunnerClock
    ) async -> Result<WorkerProcess, WorkerStartError> {
        func failure(_ what: String, _ error: Int32 = errno) -> Result<WorkerProcess, WorkerStartError> {
            .failure(WorkerStartError(reason: "cannot \(what): \(String(cString: strerror(error)))"))
        }
        guard let requests = OwnedDescriptors.closeOnExecPair() else { return failure("make a pipe") }
        let runnerEnds = OwnedDescriptors([requests[1]])
        guard let replies = OwnedDescriptors.closeOnExecPair() else {
            let why = errno
            OwnedDescriptors([requests[0]]).close()
            runnerEnds.close()
            return failure("make a pipe", why)
        }
        let runnerReplies = OwnedDescriptors([replies[0]])
        let childEnds = OwnedDescriptors([requests[0], replies[1]])
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        guard null >= 0 else {
            let why = errno
            childEnds.close()
            runnerEnds.close()
            runnerReplies.close()
            return failure("open /dev/null", why)
        }
        let variables = ProcessInfo.processInfo.environment.map { $0.key + "=" + $0.value }
        var pid: pid_t = 0
        var pidfd: Int32 = -1
        let rc = withCStrings([program] + arguments) { argv in
            withCStrings(variables) { envp in
                jobrunner_spawn(program, argv, envp, nil, requests[0], replies[1], null, &pid, &pidfd)
            }
        }
        // The child has its copies: the runner's end of the replies reads the end of the file
        // once the worker is gone.
        childEnds.close()
        close(null)
        guard rc == 0 else {
            runnerEnds.close()
            runnerReplies.close()
            return failure("start \(program)", rc)
        }
        if pidfd >= 0 { close(pidfd) }
        let child = pid
        ProcessGroups.spawned(child)
        let ended = Latch<Termination>()
        let reaper = Thread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
            ProcessGroups.reaped(child)
            // WIFEXITED, WEXITSTATUS, WTERMSIG, which Swift cannot call (they are macros).
            ended.set(status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F))
        }
        reaper.name = "jobrunner worker \(child)"
        reaper.start()
        runnerEnds.release()
        runnerReplies.release()
        let channel = FrameChannel(requests: requests[1], replies: replies[0])
        return .success(WorkerProcess(pid: child, clock: clock, channel: channel, ended: ended))
    }

    /// `strings` as a NULL-terminated array of C strings, for `body` only.
    private static func withCStrings<T>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> T)
        -> T
    {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return body(pointers)
    }

    /// Sends `request` (nil: sends nothing, only waits for the worker's next frame, such as the
    /// one it writes when it is ready) and waits for the answer, for the worker's end, for
    /// `deadline` (on the clock) or for the caller's cancellation, whichever comes first
    /// (``AttemptWatch``). In all but the first case the worker is finished: its group is ended
    /// by `teardown` (SIGTERM, `killGrace`, SIGKILL) before this returns.
    public func exchange(_ request: [UInt8]?, deadline: Deadline?, teardown: Teardown) async -> Exchange {
        let watch = AttemptWatch<WorkerFrames.ReadResult>()
        let clock = self.clock
        watch.arm(deadline, clock: clock)
        channel.submit(request) { watch.finish($0, at: clock.now()) }
        let end = await withTaskCancellationHandler {
            await watch.end
        } onCancel: {
            watch.interrupt()
        }
        switch end {
        case .finished(.frame(let bytes)):
            return .reply(bytes)
        case .finished(.ended):
            // Dead, or about to be: whatever it left in its group goes too.
            await self.end(by: teardown)
            return .ended(await termination)
        case .finished(.tooLarge(let length)):
            await self.end(by: teardown)
            return .tooLarge(length)
        case .stopped(let stop):
            await self.end(by: teardown)
            return .stopped(stop)
        }
    }

    /// Closes the worker's input, which it reads as "exit now"; does not wait. Only for a
    /// worker with no exchange under way.
    public func stop() {
        channel.close()
    }

    /// How the worker ended; waits for its end.
    public var termination: Termination {
        get async { await ended.value }
    }

    /// Ends the worker's group by `teardown` and waits until the worker is reaped.
    private func end(by teardown: Teardown) async {
        let (group, clock) = (pid, self.clock)
        // Unstructured: in a cancelled task every wait on the clock would end at once, cutting
        // the grace period short.
        await Task { await teardown.end(group: group, clock: clock) }.value
        _ = await ended.value
    }
}

/// Why a worker process could not be started.
public struct WorkerStartError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public var reason: String
    public var description: String { reason }
}

/// The runner's ends of a worker's pipes, driven by a thread of their own: reads and writes
/// block, and a worker answers one request at a time, so one thread per worker does the I/O and
/// the async side only waits for its answers. The thread closes both pipes when the worker
/// ends or ``close()`` is called.
final class FrameChannel: @unchecked Sendable {
    // @unchecked: `job` and `closing` are guarded by `condition`; the descriptors are used by
    // the thread alone.
    private let condition = NSCondition()
    private var job: (request: [UInt8]?, done: @Sendable (WorkerFrames.ReadResult) -> Void)?
    private var closing = false
    private let requests: Int32
    private let replies: Int32

    init(requests: Int32, replies: Int32) {
        self.requests = requests
        self.replies = replies
        let thread = Thread { [self] in self.loop() }
        thread.name = "jobrunner worker I/O"
        thread.start()
    }

    /// Queues one exchange; `done` is called on the channel's thread with what was read.
    func submit(_ request: [UInt8]?, done: @escaping @Sendable (WorkerFrames.ReadResult) -> Void) {
        condition.withLock {
            job = (request, done)
            condition.signal()
        }
    }

    func close() {
        condition.withLock {
            closing = true
            condition.signal()
        }
    }

    private func loop() {
        // A write to a worker that died raises SIGPIPE for this thread: blocked here, the write
        // fails with EPIPE instead, whatever the rest of the process does with the signal.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        defer {
            Glibc.close(requests)
            Glibc.close(replies)
        }
        while true {
            let next: (request: [UInt8]?, done: @Sendable (WorkerFrames.ReadResult) -> Void)? =
                condition.withLock {
                    while job == nil && !closing { condition.wait() }
                    defer { job = nil }
                    return job
                }
            guard let next else { return }
            let result: WorkerFrames.ReadResult
            if let request = next.request, !WorkerFrames.write(request, to: requests) {
                result = .ended
            } else {
                result = WorkerFrames.read(from: replies)
            }
            next.done(result)
            guard case .frame = result else { return }
        }
    }
}
