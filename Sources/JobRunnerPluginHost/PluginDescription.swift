/// What a plugin library says about itself, read from its descriptor: all jobrunner needs to
/// check plugin jobs and to list the plugin, without keeping the library loaded.
public struct PluginDescription: Sendable, Hashable, Codable {
    public var name: String
    public var version: String
    /// The Swift compiler version the plugin reports; nil for a plugin written in C.
    public var swiftVersion: String?
    public var handlers: [String]
    /// The library's path.
    public var path: String

    public init(name: String, version: String, swiftVersion: String?, handlers: [String], path: String) {
        self.name = name
        self.version = version
        self.swiftVersion = swiftVersion
        self.handlers = handlers
        self.path = path
    }
}
