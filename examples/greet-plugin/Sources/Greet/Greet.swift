import JobRunnerPluginAPI

/// `greet.hello`: says hello to `name`, with an exclamation mark when `excited`.
struct Hello: PluginHandler {
    struct Parameters: Decodable, Sendable {
        var name: String
        var excited: Bool?
    }

    static let name = "hello"

    func run(_ context: HandlerContext<Parameters>) async throws -> HandlerResult {
        let greeting = "Hello, \(context.parameters.name)" + (context.parameters.excited == true ? "!" : ".")
        context.log(greeting)
        return .succeeded(outputs: ["greeting": greeting])
    }
}

@_cdecl("jobrunner_plugin_v1")
public func jobrunnerPlugin() -> UnsafeRawPointer {
    Plugin.export(name: "greet", version: "1.0.0", handlers: [Hello.self])
}
