import Foundation
import JobRunnerPluginAPI
import Logging

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

@_cdecl("jobrunner_plugin_v1")
public func jobrunnerPlugin() -> UnsafeRawPointer {
    Plugin.export(
        name: "testkit", version: "0.1.0",
        handlers: [Echo.self, Flaky.self, Throws.self, Skip.self, Crash.self, Sleep.self])
}
