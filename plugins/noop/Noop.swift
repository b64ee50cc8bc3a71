import JobRunnerPluginAPI

/// `noop.ok`: succeeds at once. The benchmark's handler: what a plugin job costs when the
/// handler itself costs nothing.
struct OK: PluginHandler {
    static let name = "ok"

    func run(_ context: HandlerContext<NoParameters>) async throws -> HandlerResult {
        .succeeded
    }
}

@_cdecl("jobrunner_plugin_v1")
public func jobrunnerPlugin() -> UnsafeRawPointer {
    Plugin.export(name: "noop", version: "1.0.0", handlers: [OK.self])
}
