import Foundation
import Glibc
import JobRunnerCore
import Subprocess

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

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
    private let ended: Task<Termination, Never>

    private init(pid: Int32, clock: any RunnerClock, channel: FrameChannel, ended: Task<Termination, Never>) {
        self.pid = pid
        self.clock = clock
        self.channel = channel
        self.ended = ended
    }

    /// Starts `program` with `arguments` (environment: the runner's); returns once it exists,
    /// or how it failed to start.
    public static func start(
        program: String, arguments: [String], clock: any RunnerClock
    ) async -> Result<WorkerProcess, WorkerStartError> {
        guard let requests = closeOnExecPair(), let replies = closeOnExecPair() else {
            return .failure(
                WorkerStartError(reason: "cannot make a pipe: \(String(cString: strerror(errno)))"))
        }
        let started = Latch<Result<Int32, WorkerStartError>>()
        let (childInput, childOutput) = (requests[0], replies[1])
        // Unstructured: it lives as long as the worker, and reaps it.
        let ended = Task<Termination, Never> {
            var options = PlatformOptions()
            // 0: the child's own pid, so it leads a new group.
            options.processGroupID = 0
            do {
                let result = try await Subprocess.run(
                    .path(FilePath(program)), arguments: Arguments(arguments), platformOptions: options,
                    input: .fileDescriptor(
                        FileDescriptor(rawValue: childInput), closeAfterSpawningProcess: true),
                    output: .fileDescriptor(
                        FileDescriptor(rawValue: childOutput), closeAfterSpawningProcess: true),
                    error: .discarded
                ) { execution in
                    started.set(.success(execution.processIdentifier.value))
                }
                switch result.terminationStatus {
                case .exited(let code): return .exited(code)
                case .signaled(let signal): return .signalled(signal)
                }
            } catch {
                started.set(.failure(WorkerStartError(reason: "\(error)")))
                return .failedToStart("\(error)")
            }
        }
        switch await started.value {
        case .failure(let failure):
            // swift-subprocess closes the child's ends whether or not the spawn worked.
            close(requests[1])
            close(replies[0])
            return .failure(failure)
        case .success(let pid):
            let channel = FrameChannel(requests: requests[1], replies: replies[0])
            return .success(WorkerProcess(pid: pid, clock: clock, channel: channel, ended: ended))
        }
    }

    /// A connected pair of descriptors, close-on-exec from their creation (no process another
    /// thread starts can inherit them): [read end, write end]. A socket pair, for Glibc offers
    /// no `pipe2` to Swift; used one way, like a pipe.
    private static func closeOnExecPair() -> [Int32]? {
        var pair: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &pair) == 0 else { return nil }
        return pair
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
