import CJobRunnerSystem
import Foundation
import Glibc

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// The start of a child without swift-subprocess (every shell job, constraint command, probe
/// and `process-per-attempt` plugin call): posix_spawn on the calling thread, then one wait on
/// ``ChildWatcher``'s thread for its output and its end. The child is set up as swift-subprocess
/// sets it up: the leader of a process group of its own, standard input from `/dev/null` (or a
/// pipe the bytes given for it are written to), no other descriptor of the runner, default
/// signal actions, nothing blocked.
extension ChildProcess {
    func spawnDirectly(
        watching watcher: ChildWatcher, errorFile: FileDescriptor?, started: Latch<Int32?>,
        onSpawn: @escaping @Sendable (Int32) -> Void
    ) async -> Result<Ended, StartFailure> {
        var errorFile = errorFile
        // The child has its copy once it is started; ours goes then, or when it cannot start.
        defer { try? errorFile?.close() }
        let variables = environment ?? ProcessInfo.processInfo.environment
        let path: String
        let first: String
        switch program {
        case .path(let given):
            path = given
            first = given
        case .name(let name):
            guard let found = Self.search(name, in: variables["PATH"], from: workingDirectory) else {
                return .failure(StartFailure(reason: "executable \"\(name)\" not found in PATH"))
            }
            path = found
            first = name
        }
        guard let null = Self.devNull else {
            return .failure(StartFailure(reason: "cannot open /dev/null for its standard input"))
        }
        // Bytes for its standard input go through a pipe of their own, fed by a thread once the
        // child exists (``OwnedDescriptors/feed(_:to:)``).
        var inputEnds: [Int32]?
        if input != nil {
            guard let pair = OwnedDescriptors.closeOnExecPair() else {
                return .failure(
                    StartFailure(reason: "cannot make a pipe: \(String(cString: strerror(errno)))"))
            }
            inputEnds = pair
        }
        let inputOwned = OwnedDescriptors(inputEnds ?? [])
        defer { inputOwned.close() }
        var ends: [Int32] = [-1, -1]
        guard jobrunner_pipe(&ends) == 0 else {
            return .failure(StartFailure(reason: "cannot make a pipe: \(String(cString: strerror(errno)))"))
        }
        var pid: pid_t = 0
        var pidfd: Int32 = -1
        let rc = Self.withCStrings([first] + arguments) { argv in
            Self.withCStrings(variables.map { $0.key + "=" + $0.value }) { envp in
                jobrunner_spawn(
                    path, argv, envp, workingDirectory, inputEnds?[0] ?? null, ends[1],
                    errorFile?.rawValue ?? ends[1], &pid, &pidfd)
            }
        }
        // The child has its copies: the pipe ends once the child and what it started close theirs.
        close(ends[1])
        try? errorFile?.close()
        errorFile = nil
        guard rc == 0 else {
            close(ends[0])
            return .failure(StartFailure(reason: Self.whyNotStarted(path, in: workingDirectory, error: rc)))
        }
        if let input, let inputEnds {
            close(inputEnds[0])
            inputOwned.release()
            OwnedDescriptors.feed(input, to: inputEnds[1])
        }
        ProcessGroups.spawned(pid)
        started.set(pid)
        onSpawn(pid)
        guard
            let (status, output, at) = await watcher.wait(
                pidfd: pidfd, pipe: ends[0], output: output, clock: clock)
        else {
            // Its end could never be seen: ended now, and said so, rather than waited for.
            kill(-pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            close(pidfd)
            close(ends[0])
            return .failure(
                StartFailure(
                    reason: "epoll refused to watch \(path) once started; it was killed"
                ))
        }
        return .success(Ended(status: status, output: output, at: at))
    }

    /// `/dev/null`, open for reading (close-on-exec) for as long as the process lives: every
    /// child's standard input, without an open and a close per child.
    private static let devNull: Int32? = {
        let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
        return fd >= 0 ? fd : nil
    }()

    /// What posix_spawn's error `error` means for the user: a working directory that cannot be
    /// entered is named as such, since the error alone reads as a missing program.
    static func whyNotStarted(_ path: String, in directory: String?, error: Int32) -> String {
        if let directory {
            var info = stat()
            if stat(directory, &info) != 0 {
                return "cannot enter the working directory \(directory): \(String(cString: strerror(errno)))"
            }
            if info.st_mode & S_IFMT != S_IFDIR {
                return "cannot enter the working directory \(directory): it is not a directory"
            }
            if access(directory, X_OK) != 0 {
                return "cannot enter the working directory \(directory): \(String(cString: strerror(errno)))"
            }
        }
        let place = directory.map { " in \($0)" } ?? ""
        return "cannot run \(path)\(place): \(String(cString: strerror(error)))"
    }

    /// The first executable file called `name` in the directories of `searchPath` (an empty
    /// entry is the working directory), as a shell started in `directory` looks for a command:
    /// relative entries are taken from there, where the child runs. `name` itself when it
    /// holds a `/`.
    static func search(_ name: String, in searchPath: String?, from directory: String? = nil) -> String? {
        if name.contains("/") { return name }
        for entry in (searchPath ?? "/usr/bin:/bin").split(separator: ":", omittingEmptySubsequences: false) {
            // Relative to the child's working directory, which it enters before the exec.
            let candidate = (entry.isEmpty ? "." : String(entry)) + "/" + name
            var seen = candidate
            if let directory, !candidate.hasPrefix("/") { seen = directory + "/" + candidate }
            var info = stat()
            if stat(seen, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(seen, X_OK) == 0 {
                return candidate
            }
        }
        return nil
    }

    /// `strings` as a NULL-terminated array of C strings, for the length of `body`.
    private static func withCStrings<T>(
        _ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> T
    ) -> T {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return body(pointers)
    }
}
