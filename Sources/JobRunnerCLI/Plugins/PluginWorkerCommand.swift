import ArgumentParser
import Foundation
import Glibc
import JobRunnerPluginHost
import JobRunnerShell

/// `jobrunner plugin-worker`: a persistent worker of `isolation: process`. Loads one plugin,
/// says so with an empty frame (or sends why it cannot and exits), then answers request frames
/// (the plugin ABI's JSON request) with response frames, one call at a time, until its input
/// ends. During a call, its standard output and error go to the attempt's log.
struct PluginWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugin-worker",
        abstract: "Serve plugin calls over framed pipes (used by `isolation: process`; not for people).",
        shouldDisplay: false
    )

    @Option(help: "The plugin library's path.") var library: String
    @Option(help: "The plugin's name.") var plugin: String

    func run() throws {
        // The frames move off descriptors 0 and 1, so nothing a handler prints can garble them,
        // and the process the handler may start does not inherit them.
        let requests = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3)
        let replies = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)
        guard requests >= 0, replies >= 0 else { throw ExitCode(ExitStatus.stateUnusable) }
        let null = open("/dev/null", O_RDWR)
        for fd in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] { dup2(null, fd) }
        close(null)

        let catalog = PluginCatalog(searchPath: [(library as NSString).deletingLastPathComponent])
        let loaded: LoadedPlugin
        switch catalog.plugin(plugin) {
        case .failure(let error):
            _ = WorkerFrames.write(Array("\(error)".utf8), to: replies)
            throw ExitCode(ExitStatus.stateUnusable)
        case .success(let plugin):
            loaded = plugin
        }
        guard WorkerFrames.write([], to: replies) else { return }
        let inbox = WorkerInbox(requests: requests)
        while true {
            let request = inbox.next()
            let response = Self.call(loaded, request: request)
            guard WorkerFrames.write(response, to: replies) else { _exit(0) }
        }
    }

    /// The members of a request the worker reads itself.
    private struct Envelope: Decodable {
        var handler: String
        var log: String?
    }

    /// Calls the handler the request names, its standard output and error in the attempt's log.
    static func call(_ plugin: LoadedPlugin, request: [UInt8]) -> [UInt8] {
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(request)) else {
            return Array(
                #"{"status":"failed","message":"the plugin's worker got a request it cannot read"}"#.utf8)
        }
        let log = envelope.log.map(CallOutput.init)
        defer { log?.restore() }
        return plugin.call(handler: envelope.handler, request: request)
    }
}

/// Standard output and error pointed at an attempt's log for the length of one call; a log the
/// call created and left empty is removed, with the directory made for it, as an in-process
/// call that logs nothing leaves neither.
private struct CallOutput {
    let path: String
    let fd: Int32
    let createdFile: Bool
    let createdDirectory: Bool

    init(path: String) {
        self.path = path
        let flags = O_WRONLY | O_APPEND | O_CLOEXEC
        var fd = open(path, flags)
        var (createdFile, createdDirectory) = (false, false)
        if fd < 0 && errno == ENOENT {
            fd = open(path, flags | O_CREAT | O_EXCL, 0o644)
            if fd < 0 && errno == ENOENT {
                createdDirectory = mkdir((path as NSString).deletingLastPathComponent, 0o755) == 0
                if !createdDirectory {
                    try? FileManager.default.createDirectory(
                        atPath: (path as NSString).deletingLastPathComponent,
                        withIntermediateDirectories: true)
                }
                fd = open(path, flags | O_CREAT | O_EXCL, 0o644)
            }
            createdFile = fd >= 0
        }
        self.fd = fd
        self.createdFile = createdFile
        self.createdDirectory = createdDirectory
        if fd >= 0 {
            dup2(fd, STDOUT_FILENO)
            dup2(fd, STDERR_FILENO)
        }
    }

    func restore() {
        guard fd >= 0 else { return }
        fflush(nil)
        let null = open("/dev/null", O_WRONLY)
        dup2(null, STDOUT_FILENO)
        dup2(null, STDERR_FILENO)
        close(null)
        var info = stat()
        if createdFile && fstat(fd, &info) == 0 && info.st_size == 0 {
            unlink(path)
            if createdDirectory { rmdir((path as NSString).deletingLastPathComponent) }
        }
        close(fd)
    }
}

/// Reads request frames on a thread of its own, so the worker learns that its input ended
/// (the runner exited, however it died, or stopped the worker) even in the middle of a call:
/// it then ends at once, with whatever the handler started in its process group.
private final class WorkerInbox: @unchecked Sendable {
    // @unchecked: `frames` is guarded by `condition`.
    private let condition = NSCondition()
    private var frames: [[UInt8]] = []

    init(requests: Int32) {
        let thread = Thread { [self] in
            while case .frame(let frame) = WorkerFrames.read(from: requests) {
                condition.withLock {
                    frames.append(frame)
                    condition.signal()
                }
            }
            // Its own group (the runner starts it so): take along what the handler started.
            if getpgrp() == getpid() { kill(0, SIGKILL) }
            _exit(0)
        }
        thread.start()
    }

    /// The next request, waiting for it.
    func next() -> [UInt8] {
        condition.withLock {
            while frames.isEmpty { condition.wait() }
            return frames.removeFirst()
        }
    }
}
