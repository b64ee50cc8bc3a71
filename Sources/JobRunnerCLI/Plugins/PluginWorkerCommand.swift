import ArgumentParser
// `stat` and `timespec`: with SwiftNIO in the build (the dashboard), their definitions may be
// found in CDispatch's module, which MemberImportVisibility then asks to be imported.
import CDispatch
import Foundation
import Glibc
import JobRunnerJSON
import JobRunnerPluginAPI
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
        // Kept open: standard output and error go back to it after every call.
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        for fd in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] { dup2(null, fd) }

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
        InputWatch.start(requests)
        while case .frame(let request) = WorkerFrames.read(from: requests) {
            let response = Self.call(loaded, request: request, null: null)
            guard WorkerFrames.write(response, to: replies) else { _exit(0) }
        }
        InputWatch.endGroup()
    }

    /// The members of a request the worker reads itself.
    struct Envelope: Decodable, Equatable {
        var handler: String
        var log: String?
    }

    /// Calls the handler the request names, its standard output and error in the attempt's log
    /// (then `null` again).
    static func call(_ plugin: LoadedPlugin, request: [UInt8], null: Int32) -> [UInt8] {
        guard
            let envelope = Envelope(reading: request)
                ?? (try? JSONDecoder().decode(Envelope.self, from: Data(request)))
        else {
            return Array(
                #"{"status":"failed","message":"the plugin's worker got a request it cannot read"}"#.utf8)
        }
        let log = envelope.log.map(CallOutput.init)
        defer { log?.restore(null: null) }
        return plugin.call(handler: envelope.handler, request: request)
    }
}

extension PluginWorkerCommand.Envelope {
    /// The envelope read with the strict `JSONReader`, which reads only what it is sure
    /// of; nil for anything else (`JSONDecoder` then reads it, or says it cannot).
    init?(reading request: [UInt8]) {
        var handler: String?
        var log: String??
        let read = request.withUnsafeBytes { bytes in
            var reader = JSONReader(bytes)
            let object = reader.object { reader, key in
                if key.equals("handler") {
                    guard handler == nil, let value = reader.string() else { return false }
                    handler = value
                    return true
                }
                if key.equals("log") {
                    guard log == nil, let value = reader.nullable({ $0.string() }) else { return false }
                    log = value
                    return true
                }
                return reader.skipValue()
            }
            return object && reader.atEnd()
        }
        guard read, let handler else { return nil }
        self.init(handler: handler, log: log ?? nil)
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
        // Made here first, as a new attempt's log is; opened as it is when it exists. Owner
        // only, the file and each folder made for it (SPEC 3.1), whatever the umask.
        var fd = open(path, flags | O_CREAT | O_EXCL, 0o600)
        var (createdFile, createdDirectory) = (fd >= 0, false)
        if fd < 0 && errno == EEXIST {
            fd = open(path, flags)
        } else if fd < 0 && errno == ENOENT {
            let directory = (path as NSString).deletingLastPathComponent
            createdDirectory = access(directory, F_OK) != 0
            CappedLog.makeDirectories(for: path)
            fd = open(path, flags | O_CREAT | O_EXCL, 0o600)
            createdFile = fd >= 0
        }
        if createdFile { fchmod(fd, 0o600) }
        self.fd = fd
        self.createdFile = createdFile
        self.createdDirectory = createdDirectory
        if fd >= 0 {
            dup2(fd, STDOUT_FILENO)
            dup2(fd, STDERR_FILENO)
        }
    }

    /// Points standard output and error back at `null`; removes the log if the call made it
    /// and left it empty.
    func restore(null: Int32) {
        guard fd >= 0 else { return }
        fflush(nil)
        dup2(null, STDOUT_FILENO)
        dup2(null, STDERR_FILENO)
        var info = stat()
        if createdFile && fstat(fd, &info) == 0 && info.st_size == 0 {
            unlink(path)
            if createdDirectory { rmdir((path as NSString).deletingLastPathComponent) }
        }
        close(fd)
    }
}

/// Ends the worker as soon as its input ends (the runner exited, however it died, or stopped the
/// worker), even in the middle of a call, with whatever the handler started in its process
/// group. A thread waits for the runner's end of the requests to close, without reading: the
/// worker reads its requests itself, so a request wakes one thread only.
private enum InputWatch {
    /// `POLLRDHUP` (Linux): the other end closed. Glibc's module does not export it.
    private static let peerClosed: Int16 = 0x2000

    static func start(_ requests: Int32) {
        let thread = Thread {
            var watched = pollfd(fd: requests, events: peerClosed, revents: 0)
            // Only the end (or an error) wakes it: requests that arrive are not asked about.
            while poll(&watched, 1, -1) <= 0 || watched.revents == 0 {}
            endGroup()
        }
        thread.start()
    }

    /// Ends the worker and, when it leads its group (the runner starts it so), the group.
    static func endGroup() -> Never {
        if getpgrp() == getpid() { kill(0, SIGKILL) }
        _exit(0)
    }
}
