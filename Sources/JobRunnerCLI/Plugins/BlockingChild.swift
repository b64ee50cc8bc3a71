import Dispatch
import Foundation
import Glibc
import JobRunnerCore

/// A short child process run to its end from synchronous code (validation is synchronous):
/// `input` on its standard input, standard output and error kept (bounded), in a process group
/// of its own that is killed when it outlives `timeout`.
///
/// Not swift-subprocess, whose API is async: validation runs before the runner's tasks exist
/// and must not block a thread of the cooperative pool waiting for one.
struct BlockingChild {
    /// How the child ended.
    enum Ending: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)
        /// It outlived the timeout; its process group was killed.
        case timedOut
        case failedToStart(String)
    }

    /// How the child ended and what it wrote.
    struct Outcome {
        var ending: Ending
        /// The first `outputLimit + 1` bytes of its standard output at most.
        var output: [UInt8]
        /// The last `errorLimit` bytes of its standard error.
        var errors: [UInt8]
    }

    var executable: String
    var arguments: [String]
    var input: [UInt8]
    var timeout: Duration
    var outputLimit: Int
    var errorLimit = 4 << 10
    /// Variables set for the child on top of this process's environment.
    var environment: [String: String] = [:]

    /// Starts the child and waits for it; never blocks longer than about `timeout`.
    func run() -> Outcome {
        var pipes: [[Int32]] = []
        for _ in 0..<3 {
            // A socket pair made close-on-exec at once (pipe2 is not visible to Swift): a child
            // another thread starts meanwhile must not inherit an end and hold it open.
            var ends: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &ends) == 0
            else {
                let why = String(cString: strerror(errno))
                for descriptor in pipes.joined() { close(descriptor) }
                return Outcome(ending: .failedToStart("socketpair: \(why)"), output: [], errors: [])
            }
            pipes.append(ends)
        }
        // Child ends: stdin is pipes[0][0], stdout and stderr are pipes[1][1] and pipes[2][1].
        let spawned = spawn(stdin: pipes[0][0], stdout: pipes[1][1], stderr: pipes[2][1])
        for childEnd in [pipes[0][0], pipes[1][1], pipes[2][1]] { close(childEnd) }
        let pid: pid_t
        switch spawned {
        case .failure(let why):
            for parentEnd in [pipes[0][1], pipes[1][0], pipes[2][0]] { close(parentEnd) }
            return Outcome(ending: .failedToStart(why.message), output: [], errors: [])
        case .success(let started): pid = started
        }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        // Killed at the deadline whatever it is doing, even with its pipes closed; a flag set
        // before the child is reaped keeps the kill from reaching a reused process group.
        let state = Locked((reaped: false, killed: false))
        let watchdog = DispatchWorkItem {
            state.withLock { state in
                guard !state.reaped else { return }
                state.killed = true
                kill(-pid, SIGKILL)
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.seconds(timeout), execute: watchdog)
        var (output, errors) = exchange(
            stdin: pipes[0][1], stdout: pipes[1][0], stderr: pipes[2][0], until: deadline)
        // Wait without reaping, so the process group cannot be reused while it is killed.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        let killed = state.withLock { state in
            state.reaped = true
            // What the child left behind in its group (a daemon a constructor forked) goes too.
            kill(-pid, SIGKILL)
            return state.killed
        }
        watchdog.cancel()
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if errors.count > errorLimit { errors.removeFirst(errors.count - errorLimit) }
        if output.count > outputLimit + 1 { output.removeLast(output.count - outputLimit - 1) }
        let ending: Ending
        if killed {
            ending = .timedOut
        } else if status & 0x7f == 0 {
            ending = .exited((status >> 8) & 0xff)
        } else {
            ending = .signalled(status & 0x7f)
        }
        return Outcome(ending: ending, output: output, errors: errors)
    }

    private struct SpawnError: Error {
        var message: String
    }

    /// Starts the child in a process group of its own, with default signal handling and an
    /// empty signal mask whatever the runner set for itself.
    private func spawn(stdin: Int32, stdout: Int32, stderr: Int32) -> Result<pid_t, SpawnError> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in Int32(1)..<32 where signal != SIGKILL && signal != SIGSTOP {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { $1 }
        let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for string in argv + envp { free(string) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard code == 0 else {
            return .failure(SpawnError(message: "\(executable): \(String(cString: strerror(code)))"))
        }
        return .success(pid)
    }

    /// Writes `input` to the child and reads its output and errors until both are closed or
    /// `deadline` passes. Closes the three descriptors.
    private func exchange(
        stdin: Int32, stdout: Int32, stderr: Int32, until deadline: ContinuousClock.Instant
    ) -> (output: [UInt8], errors: [UInt8]) {
        var descriptors = [stdin, stdout, stderr]
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        }
        var written = 0
        if input.isEmpty {
            close(stdin)
            descriptors[0] = -1
        }
        var output: [UInt8] = []
        var errors: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while descriptors[1] >= 0 || descriptors[2] >= 0 {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { break }
            var polled = descriptors.enumerated().map { index, descriptor in
                pollfd(fd: descriptor, events: Int16(index == 0 ? POLLOUT : POLLIN), revents: 0)
            }
            let milliseconds = Int32(
                clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds
                    / 1_000_000_000_000_000 + 1)
            guard poll(&polled, nfds_t(polled.count), milliseconds) >= 0 || errno == EINTR else { break }
            for (index, entry) in polled.enumerated() where entry.fd >= 0 && entry.revents != 0 {
                if index == 0 {
                    let count = input[written...].withUnsafeBytes {
                        write(entry.fd, $0.baseAddress, $0.count)
                    }
                    if count > 0 { written += count }
                    if written == input.count || (count < 0 && errno != EAGAIN && errno != EINTR) {
                        close(entry.fd)
                        descriptors[0] = -1
                    }
                    continue
                }
                let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    if index == 1 {
                        // Past the limit the output is refused anyway: keep reading, keep nothing.
                        output.append(
                            contentsOf: buffer[..<min(count, max(0, outputLimit + 1 - output.count))])
                    } else {
                        errors.append(contentsOf: buffer[..<count])
                        if errors.count > 4 * errorLimit { errors.removeFirst(errors.count - errorLimit) }
                    }
                } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                    close(entry.fd)
                    descriptors[index] = -1
                }
            }
        }
        for descriptor in descriptors where descriptor >= 0 { close(descriptor) }
        return (output, errors)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
