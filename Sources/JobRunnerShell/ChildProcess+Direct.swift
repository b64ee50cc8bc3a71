import CJobRunnerSystem
import Foundation
import Glibc

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// The start of a child without swift-subprocess, for a child with nothing on its standard input
/// (every shell job, constraint command and probe): posix_spawn on the calling thread, then one
/// wait on ``ChildWatcher``'s thread for its output and its end. The child is set up as
/// swift-subprocess sets it up: the leader of a process group of its own, standard input from
/// `/dev/null`, no other descriptor of the runner, default signal actions, nothing blocked.
extension ChildProcess {
    func spawnDirectly(
        watching watcher: ChildWatcher, errorFile: FileDescriptor?, started: Latch<Int32?>,
        onSpawn: @escaping @Sendable (Int32) -> Void
    ) async -> Result<Ended, StartFailure> {
        defer { try? errorFile?.close() }
        let variables = environment ?? ProcessInfo.processInfo.environment
        let path: String
        switch program {
        case .path(let given):
            path = given
        case .name(let name):
            guard let found = Self.search(name, in: variables["PATH"]) else {
                return .failure(StartFailure(reason: "executable \"\(name)\" not found in PATH"))
            }
            path = found
        }
        var ends: [Int32] = [-1, -1]
        guard jobrunner_pipe(&ends) == 0 else {
            return .failure(StartFailure(reason: "cannot make a pipe: \(String(cString: strerror(errno)))"))
        }
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        guard null >= 0 else {
            close(ends[0])
            close(ends[1])
            return .failure(
                StartFailure(reason: "cannot open /dev/null: \(String(cString: strerror(errno)))"))
        }
        var pid: pid_t = 0
        var pidfd: Int32 = -1
        let first: String
        switch program {
        case .path(let given): first = given
        case .name(let name): first = name
        }
        let rc = Self.withCStrings([first] + arguments) { argv in
            Self.withCStrings(variables.map { $0.key + "=" + $0.value }) { envp in
                jobrunner_spawn(
                    path, argv, envp, workingDirectory, null, ends[1], errorFile?.rawValue ?? ends[1], &pid,
                    &pidfd)
            }
        }
        // The child has its copies: the pipe ends once the child and what it started close theirs.
        close(null)
        close(ends[1])
        guard rc == 0 else {
            close(ends[0])
            let place = workingDirectory.map { " in \($0)" } ?? ""
            return .failure(
                StartFailure(reason: "cannot run \(path)\(place): \(String(cString: strerror(rc)))"))
        }
        ProcessGroups.spawned(pid)
        started.set(pid)
        onSpawn(pid)
        let (status, output) = await watcher.wait(pidfd: pidfd, pipe: ends[0], output: output)
        return .success(Ended(status: status, output: output))
    }

    /// The first executable file called `name` in the directories of `searchPath` (an empty
    /// entry is the working directory), as a shell looks for a command; `name` itself when it
    /// holds a `/`.
    static func search(_ name: String, in searchPath: String?) -> String? {
        if name.contains("/") { return name }
        for directory in (searchPath ?? "/usr/bin:/bin").split(
            separator: ":", omittingEmptySubsequences: false)
        {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + name
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 {
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
