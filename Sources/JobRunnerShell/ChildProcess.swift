import Foundation
import Glibc
import JobRunnerCore
import Subprocess

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// One child process from spawn to the end of its process group: the single place where
/// jobrunner starts a program and ends it, for shell jobs, isolated plugin calls, constraint
/// commands and connectivity probes alike.
///
/// The process is spawned with posix_spawn as the leader of a process group of its own, so
/// everything it starts can be ended together: directly, its output and its end awaited on
/// ``ChildWatcher``'s thread (ChildProcess+Direct.swift); through swift-subprocess where the
/// kernel has no process descriptors for the watcher. Its ``Teardown`` is the attempts' one
/// policy: a deadline (measured on the injected clock) or a cancelled caller ends the group,
/// SIGTERM, then SIGKILL once `killGrace` has passed on that clock with anything left. When the
/// main process exits, processes it left behind in the group are ended the same way, as
/// systemd's `KillMode=control-group` does; with a ``mark``, so are the processes it started
/// that left the group.
///
/// How the process ended is a value, never an error: see ``Termination``.
public struct ChildProcess: Sendable {
    /// The program to start.
    public enum Program: Sendable, Hashable {
        /// A path, absolute or relative to the working directory; no `PATH` search.
        case path(String)
        /// A name searched for in `PATH`, like a shell does for `run: [swift, build]`.
        case name(String)
    }

    /// Where standard output goes.
    public enum Output: Sendable {
        /// Kept in memory and returned in ``Outcome/output``: the last `lastBytes` bytes
        /// (`Int.max` keeps it all), so a chatty command cannot fill the runner's memory.
        case keep(lastBytes: Int)
        /// Handed to `sink` piece by piece as it arrives, for output too large to hold, like a
        /// job's log. Called from one task at a time, never after ``run(in:onSpawn:)`` returns.
        case stream(@Sendable (UnsafeRawBufferPointer) -> Void)
    }

    /// Where standard error goes.
    public enum ErrorOutput: Sendable, Hashable {
        /// Into standard output, interleaved as written, as a terminal would show them.
        case withOutput
        /// Appended to this file (created, with its directory, when missing), so it stays apart
        /// from a standard output that carries data, like an isolated plugin's response.
        case appendToFile(String)
    }

    /// How the process ended. A non-zero exit or a crash is a result the caller judges, not an
    /// error.
    public enum Termination: Sendable, Hashable {
        /// The main process exited by itself with this status.
        case exited(Int32)
        /// A signal the runner did not send ended the main process (a crash, or `kill` from
        /// elsewhere).
        case signalled(Int32)
        /// The teardown policy ended it: the deadline passed (or the main process ended at or
        /// after it), or the caller was cancelled (the runner is stopping); the process group was
        /// ended. A cancellation that came before the process was started started nothing.
        case stopped(Teardown.Stop)
        /// The program could not be started; the text says why.
        case failedToStart(String)
    }

    /// What ``run(in:onSpawn:)`` returns.
    public struct Outcome: Sendable, Hashable {
        /// How the process ended.
        public var termination: Termination
        /// Standard output, for ``Output/keep(lastBytes:)``; empty for a stream.
        public var output: [UInt8]

        /// An outcome with its output.
        public init(termination: Termination, output: [UInt8] = []) {
            self.termination = termination
            self.output = output
        }
    }

    /// The program to start.
    public var program: Program
    /// The arguments after the program's name.
    public var arguments: [String]
    /// The child's whole environment; nil gives it the runner's own.
    public var environment: [String: String]?
    /// Where it runs; nil: the runner's working directory.
    public var workingDirectory: String?
    /// Bytes written to its standard input, which then closes; nil: standard input is
    /// `/dev/null`.
    public var input: [UInt8]?
    /// Where its standard output goes.
    public var output: Output
    /// Where its standard error goes.
    public var errors: ErrorOutput
    /// How long it may run, from its start, and how its group is ended: SIGTERM, `killGrace`,
    /// SIGKILL.
    public var teardown: Teardown
    /// Measures the timeout and the grace period, so tests can drive both by hand.
    public var clock: any RunnerClock
    /// Environment entries (`NAME=value`, all present in ``environment``) that mark every
    /// process this one starts: at its end, each process that still carries them all is ended
    /// with its group, even one that left the group (`setsid`) or was orphaned. Nil: only the
    /// group is ended.
    public var mark: [String]?

    /// A process to run; nothing starts until ``run(in:onSpawn:)``.
    public init(
        program: Program, arguments: [String] = [], environment: [String: String]? = nil,
        workingDirectory: String? = nil, input: [UInt8]? = nil, output: Output = .keep(lastBytes: .max),
        errors: ErrorOutput = .withOutput, teardown: Teardown = Teardown(), clock: any RunnerClock,
        mark: [String]? = nil
    ) {
        self.mark = mark
        self.program = program
        self.arguments = arguments
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.input = input
        self.output = output
        self.errors = errors
        self.teardown = teardown
        self.clock = clock
    }

    /// Runs the process to its end and ends whatever it left in its group.
    ///
    /// Cancelling the calling task ends the process group (SIGTERM, `killGrace`, SIGKILL) and
    /// returns ``Termination/stopped(_:)`` (interrupted) once the group is gone.
    ///
    /// - Parameters:
    ///   - slots: When given, the process starts only once it holds one of these slots, and its
    ///     timeout starts then; cancellation while waiting starts nothing.
    ///   - onSpawn: Gets the pid, which is also the process group's id, as soon as the process
    ///     exists, so a runner that dies can have the group ended by the next one.
    public func run(
        in slots: ChildSlots? = nil, onSpawn: @escaping @Sendable (Int32) -> Void = { _ in }
    ) async -> Outcome {
        guard let slots else { return await runNow(onSpawn: onSpawn) }
        return await slots.withSlot { await runNow(onSpawn: onSpawn) }
    }

    private func runNow(onSpawn: @escaping @Sendable (Int32) -> Void) async -> Outcome {
        if Task.isCancelled { return Outcome(termination: .stopped(.interrupted)) }
        let watch = AttemptWatch<Void>()
        watch.arm(teardown.deadline(from: clock.now()), clock: clock)
        // Unstructured on purpose: SIGTERM, the grace period and the sweep must run to their end
        // after the caller is cancelled, and in a cancelled task every wait on the clock would end
        // at once. It also keeps swift-subprocess from ever seeing a cancellation, to which it
        // would answer with a teardown of its own, timed on the real clock. Immediate: the spawn
        // starts on this thread, not after a wait for the pool to pick the task up.
        let lifecycle = Task.immediate { await self.lifecycle(watch: watch, onSpawn: onSpawn) }
        return await withTaskCancellationHandler {
            await lifecycle.value
        } onCancel: {
            watch.interrupt()
        }
    }

    private func lifecycle(watch: AttemptWatch<Void>, onSpawn: @escaping @Sendable (Int32) -> Void) async
        -> Outcome
    {
        // The group's id once the process exists; nil when it could not be started.
        let started = Latch<Int32?>()
        // The watch is the child task, so the spawn goes ahead on this task at once.
        async let watched: Void = end(started: started, watch: watch)
        let result = await spawn(started: started, onSpawn: onSpawn)
        // Its end, when it was seen: at or after the deadline, it timed out all the same.
        watch.finish((), at: (try? result.get())?.at)
        await watched
        // The sweep: whatever the main process left in its group, and whatever it started that
        // left the group.
        let group = await started.value
        if let group { ProcessGroups.reaped(group) }
        await teardown.end(group: group, marked: mark, clock: clock)
        switch result {
        case .failure(let failure):
            return Outcome(termination: .failedToStart(failure.reason))
        case .success(let ended):
            return Outcome(
                termination: Self.termination(of: ended, watched: await watch.end), output: ended.output)
        }
    }

    /// How the run ended for the caller: as the teardown policy stopped it, else as the main
    /// process ended.
    static func termination(of ended: Ended, watched: AttemptWatch<Void>.End) -> Termination {
        switch watched {
        case .stopped(let stop): .stopped(stop)
        case .finished:
            switch ended.status {
            case .exited(let code): .exited(code)
            case .signalled(let signal): .signalled(signal)
            }
        }
    }

    /// Waits for the first of: the process's end, the deadline, a cancelled caller; in the
    /// latter two cases ends the group, by the teardown policy, before it returns.
    private func end(started: Latch<Int32?>, watch: AttemptWatch<Void>) async {
        guard let group = await started.value else { return }
        if case .stopped = await watch.end {
            await teardown.end(group: group, clock: clock)
        }
    }

    /// What the main process left: its status and the output kept.
    struct Ended: Sendable {
        var status: ChildWatcher.Status
        var output: [UInt8]
        /// When its end was seen, on the injected clock, by a thread that does not wait for the
        /// cooperative pool (``ChildWatcher``'s); nil when not known that early.
        var at: Date? = nil
    }

    /// Starts the process and returns once it has exited and been reaped; tells `started` its
    /// pid (or that there is none).
    private func spawn(
        started: Latch<Int32?>, onSpawn: @escaping @Sendable (Int32) -> Void
    ) async -> Result<Ended, StartFailure> {
        defer { started.set(nil) }
        let errorFile: FileDescriptor?
        switch errors {
        case .withOutput:
            errorFile = nil
        case .appendToFile(let path):
            do {
                errorFile = try Self.openForAppending(path)
            } catch {
                return .failure(StartFailure(reason: "cannot open \(path) for its standard error: \(error)"))
            }
        }
        if let watcher = ChildWatcher.shared {
            return await spawnDirectly(
                watching: watcher, errorFile: errorFile, started: started, onSpawn: onSpawn)
        }
        var options = PlatformOptions()
        // 0: the child's own pid, so it leads a new group.
        options.processGroupID = 0
        let output = self.output
        // The input goes through a pipe of ours, and every descriptor given to swift-subprocess
        // is closed here (see ``OwnedDescriptors``): none it makes itself is left for it to close
        // when the next one cannot be made.
        var inputPipe: [Int32]?
        if input != nil {
            guard let pair = OwnedDescriptors.closeOnExecPair() else {
                let why = String(cString: strerror(errno))
                try? errorFile?.close()
                return .failure(StartFailure(reason: "cannot make a pipe: \(why)"))
            }
            inputPipe = pair
        }
        let childEnds = OwnedDescriptors([inputPipe?[0] ?? -1, errorFile?.rawValue ?? -1])
        let feeder = OwnedDescriptors([inputPipe?[1] ?? -1])
        defer {
            childEnds.close()
            feeder.close()
        }
        let input = self.input
        let body = { (pid: Int32, sequence: SubprocessOutputSequence) async -> [UInt8] in
            childEnds.close()
            if let input, let end = inputPipe?[1] {
                feeder.release()
                OwnedDescriptors.feed(input, to: end)
            }
            ProcessGroups.spawned(pid)
            started.set(pid)
            onSpawn(pid)
            return await Self.read(sequence, into: output)
        }
        do {
            let stdin = inputPipe.map { FileDescriptor(rawValue: $0[0]) }
            switch (stdin, errorFile) {
            case (nil, nil):
                return .success(try await spawn(options, input: .none, error: .combinedWithOutput, body))
            case (nil, let file?):
                return .success(
                    try await spawn(
                        options, input: .none, error: .fileDescriptor(file, closeAfterSpawningProcess: false),
                        body))
            case (let stdin?, nil):
                return .success(
                    try await spawn(
                        options, input: .fileDescriptor(stdin, closeAfterSpawningProcess: false),
                        error: .combinedWithOutput, body))
            case (let stdin?, let file?):
                return .success(
                    try await spawn(
                        options, input: .fileDescriptor(stdin, closeAfterSpawningProcess: false),
                        error: .fileDescriptor(file, closeAfterSpawningProcess: false), body))
            }
        } catch {
            return .failure(StartFailure(reason: "\(error)"))
        }
    }

    /// Why a process could not be started.
    struct StartFailure: Error {
        var reason: String
    }

    /// One call of swift-subprocess for each kind of input and error output, which are types.
    private func spawn<Input: InputProtocol, Errors: ErrorOutputProtocol>(
        _ options: PlatformOptions, input: Input, error: Errors,
        _ body: (Int32, SubprocessOutputSequence) async -> [UInt8]
    ) async throws -> Ended {
        let executable: Executable
        switch program {
        case .path(let path): executable = .path(FilePath(path))
        case .name(let name): executable = .name(name)
        }
        var environment = Environment.inherit
        if let variables = self.environment {
            var custom: [Environment.Key: String] = [:]
            custom.reserveCapacity(variables.count)
            for (key, value) in variables { custom[Environment.Key(stringLiteral: key)] = value }
            environment = .custom(custom)
        }
        let result = try await Subprocess.run(
            executable, arguments: Arguments(arguments), environment: environment,
            workingDirectory: workingDirectory.map { FilePath($0) }, platformOptions: options, input: input,
            output: .sequence, error: error
        ) { execution in
            await body(execution.processIdentifier.value, execution.standardOutput)
        }
        switch result.terminationStatus {
        case .exited(let code): return Ended(status: .exited(code), output: result.closureResult)
        case .signaled(let signal): return Ended(status: .signalled(signal), output: result.closureResult)
        }
    }

    /// Reads standard output to its end, which comes when every process holding the pipe has
    /// closed it, or when the main process exits (swift-subprocess then stops the read).
    private static func read(_ sequence: SubprocessOutputSequence, into output: Output) async -> [UInt8] {
        var kept: [UInt8] = []
        do {
            for try await buffer in sequence {
                switch output {
                case .stream(let sink):
                    buffer.withUnsafeBytes { sink($0) }
                case .keep(let limit):
                    buffer.withUnsafeBytes { kept.append(contentsOf: $0) }
                    if kept.count > limit { kept.removeFirst(kept.count - limit) }
                }
            }
        } catch {
            // The read was stopped because the main process exited while one it left behind
            // still holds the pipe: what was read is kept, the sweep ends the rest.
        }
        return kept
    }

    private static func openForAppending(_ path: String) throws -> FileDescriptor {
        // Each missing folder owner only (a run's, a job's), whatever the umask.
        CappedLog.makeDirectories(for: path)
        // Owner only, like every file of the state directory (SPEC 3.1).
        return try FileDescriptor.open(
            FilePath(path), .writeOnly, options: [.create, .append, .closeOnExec],
            permissions: [.ownerReadWrite])
    }
}

/// A value set once and awaited by any number of tasks; later values are ignored, so whichever
/// event comes first decides.
final class Latch<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [CheckedContinuation<Value, Never>] = []
    }

    private let state = Locked(State())

    func set(_ value: Value) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, Never>] in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let known = state.withLock { state -> Value? in
                    if let value = state.value { return value }
                    state.waiters.append(continuation)
                    return nil
                }
                if let known { continuation.resume(returning: known) }
            }
        }
    }
}
