import Foundation
import JobRunnerPluginAPI
import JobRunnerPluginLogging
import Logging
import Synchronization

// Handlers for the tests: every way a handler can end, and parameters to check.

/// Succeeds with its parameters and needed outputs as outputs, and logs a line.
struct Echo: PluginHandler {
    struct Parameters: Decodable, Sendable {
        var message: String
        var count: Int?
    }
    static let name = "echo"

    func run(_ context: HandlerContext<Parameters>) async throws -> HandlerResult {
        context.log("echo \(context.parameters.message) from \(context.jobID) attempt \(context.attempt)")
        context.logger.warning("echoed", metadata: ["count": "\(context.parameters.count ?? 1)"])
        var outputs = ["message": context.parameters.message, "run": context.runID]
        for (job, values) in context.outputs {
            for (key, value) in values { outputs["in_\(job)_\(key)"] = value }
        }
        return .succeeded(outputs: outputs)
    }
}

/// Asks for a retry after `after` seconds until attempt `until`, then succeeds.
struct Flaky: PluginHandler {
    struct Parameters: Decodable, Sendable {
        var until: Int
        var after: Double
    }
    static let name = "flaky"

    func run(_ context: HandlerContext<Parameters>) async throws -> HandlerResult {
        guard context.attempt >= context.parameters.until else {
            return .retry(after: .milliseconds(Int64(context.parameters.after * 1000)), "not yet")
        }
        return .succeeded(outputs: ["attempt": String(context.attempt)])
    }
}

/// Throws.
struct Throws: PluginHandler {
    struct Broken: Error, CustomStringConvertible {
        var description: String { "the widget is broken" }
    }
    static let name = "throws"

    func run(_ context: HandlerContext<NoParameters>) async throws -> HandlerResult {
        throw Broken()
    }
}

/// Skips.
struct Skip: PluginHandler {
    static let name = "skip"

    func run(_ context: HandlerContext<NoParameters>) async throws -> HandlerResult {
        .skipped("nothing to do")
    }
}

/// Crashes the process it runs in, as a buggy plugin would.
struct Crash: PluginHandler {
    static let name = "crash"

    func run(_ context: HandlerContext<NoParameters>) async throws -> HandlerResult {
        fatalError("testkit.crash was asked to crash")
    }
}

/// Sleeps `seconds` on the real clock: for timeouts and stops.
struct Sleep: PluginHandler {
    struct Parameters: Decodable, Sendable {
        var seconds: Double
    }
    static let name = "sleep"

    func run(_ context: HandlerContext<Parameters>) async throws -> HandlerResult {
        try await Task.sleep(for: .milliseconds(Int64(context.parameters.seconds * 1000)))
        return .succeeded
    }
}

/// Writes a line to standard output and one to standard error, naming its job: where an
/// isolated call's output lands.
struct Chatter: PluginHandler {
    static let name = "chatter"

    func run(_ context: HandlerContext<NoParameters>) async throws -> HandlerResult {
        print("stdout of \(context.jobID)")
        FileHandle.standardError.write(Data("stderr of \(context.jobID)\n".utf8))
        return .succeeded
    }
}

/// Calls of `whoami` in this process so far, and whether one is running.
let whoamiCalls = Atomic<Int>(0)
let whoamiBusy = Atomic<Bool>(false)

/// Says which process it ran in and how many calls that process had made, after holding the
/// process for `seconds`; fails if another call ran in the same process meanwhile. Crashes on
/// attempt `crashOn`, hangs on attempt `hangOn`.
struct WhoAmI: PluginHandler {
    struct Parameters: Decodable, Sendable {
        var seconds: Double?
        var crashOn: Int?
        var hangOn: Int?
    }
    static let name = "whoami"

    func run(_ context: HandlerContext<Parameters>) async throws -> HandlerResult {
        if context.attempt == context.parameters.crashOn { fatalError("testkit.whoami was asked to crash") }
        if context.attempt == context.parameters.hangOn { try await Task.sleep(for: .seconds(600)) }
        guard !whoamiBusy.exchange(true, ordering: .sequentiallyConsistent) else {
            return .failed("another call was running in this process")
        }
        defer { whoamiBusy.store(false, ordering: .sequentiallyConsistent) }
        let calls = whoamiCalls.add(1, ordering: .sequentiallyConsistent).newValue
        try await Task.sleep(for: .milliseconds(Int64((context.parameters.seconds ?? 0) * 1000)))
        return .succeeded(outputs: ["pid": String(getpid()), "calls": String(calls)])
    }
}

/// Appends `JOB ATTEMPT` as one line to `file` (relative to the job's working directory), in one
/// `write` to a file opened for appending, then succeeds: a record of every attempt that ran,
/// for the crash tests to find a job done twice or lost.
struct Record: PluginHandler {
    struct Parameters: Decodable, Sendable {
        var file: String
    }
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }
    static let name = "record"

    func run(_ context: HandlerContext<Parameters>) async throws -> HandlerResult {
        let file = context.parameters.file
        let path = file.hasPrefix("/") ? file : context.workingDirectory + "/" + file
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Failure(description: "cannot open \(path): errno \(errno)") }
        defer { close(descriptor) }
        let line = Array("\(context.jobID) \(context.attempt)\n".utf8)
        let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == line.count else { throw Failure(description: "cannot append to \(path)") }
        return .succeeded
    }
}

/// A `notify:` hook's handler: appends what its request says about the finished run to `file`
/// as one line, `hook=NAME run=ID state=S job=[J] failed=[A B] summary=yes|no`. With `waitFor`,
/// first touches `file.started`, then waits until `waitFor` exists: a delivery a test can kill
/// its runner in the middle of.
struct Notified: PluginHandler {
    struct Parameters: Decodable, Sendable {
        var file: String
        var waitFor: String?
    }
    static let name = "notified"

    func run(_ context: HandlerContext<Parameters>) async throws -> HandlerResult {
        guard let notification = context.notification else { return .failed("called without a notification") }
        func place(_ file: String) -> String {
            file.hasPrefix("/") ? file : context.workingDirectory + "/" + file
        }
        let path = place(context.parameters.file)
        if let go = context.parameters.waitFor.map(place) {
            _ = FileManager.default.createFile(atPath: path + ".started", contents: nil)
            while !FileManager.default.fileExists(atPath: go) { try await Task.sleep(for: .milliseconds(20)) }
        }
        let summary = FileManager.default.fileExists(atPath: notification.summary) ? "yes" : "no"
        let line =
            "hook=\(context.jobID) run=\(notification.run) state=\(notification.state) job=[\(notification.job)] "
            + "failed=[\(notification.failed.joined(separator: " "))] summary=\(summary)\n"
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return .failed("cannot open \(path)") }
        defer { close(descriptor) }
        let bytes = Array(line.utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        context.log("notified about \(notification.run)")
        return .succeeded
    }
}

@_cdecl("jobrunner_plugin_v1")
public func jobrunnerPlugin() -> UnsafeRawPointer {
    Plugin.export(
        name: "testkit", version: "0.1.0",
        handlers: [
            Echo.self, Flaky.self, Throws.self, Skip.self, Crash.self, Sleep.self, Chatter.self, WhoAmI.self,
            Record.self, Notified.self,
        ])
}
