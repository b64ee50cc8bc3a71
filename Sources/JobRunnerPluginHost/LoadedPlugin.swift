import Foundation
import JobRunnerCore
import JobRunnerJSON
import JobRunnerPluginAPI

/// A plugin library that was loaded and checked: its descriptor, read once.
///
/// The library stays loaded for the life of the process (it is never `dlclose`d: Swift code
/// and metadata of a closed library could still be referenced).
public final class LoadedPlugin: @unchecked Sendable {
    // @unchecked: the descriptor and what it points to are immutable for the life of the
    // process (the ABI requires it), and the ABI allows `invoke` from several threads.
    /// What the descriptor says: name, version, handlers, path.
    public let info: PluginDescription
    public var name: String { info.name }
    public var version: String { info.version }
    /// The Swift compiler version the plugin reports; nil for a plugin written in C.
    public var swiftVersion: String? { info.swiftVersion }
    public var handlers: [String] { info.handlers }
    /// The library's path.
    public var path: String { info.path }
    private let descriptor: UnsafePointer<jobrunner_plugin_descriptor>

    private init(info: PluginDescription, descriptor: UnsafePointer<jobrunner_plugin_descriptor>) {
        self.info = info
        self.descriptor = descriptor
    }

    /// Reads the descriptor of the library at `path`, every count and string within
    /// `PluginLimits`: what a descriptor claims beyond them is refused, never read.
    static func read(
        plugin: String, path: String, descriptor: UnsafePointer<jobrunner_plugin_descriptor>
    ) -> Result<LoadedPlugin, PluginLoadError> {
        let value = descriptor.pointee
        func refuse(_ reason: String) -> Result<LoadedPlugin, PluginLoadError> {
            .failure(.badDescriptor(plugin: plugin, path: path, reason: reason))
        }
        func text(_ pointer: UnsafePointer<CChar>?, _ what: String) -> Result<String?, PluginLoadError> {
            guard let pointer else { return .success(nil) }
            guard let text = PluginLimits.text(at: pointer) else {
                return .failure(
                    .badDescriptor(
                        plugin: plugin, path: path,
                        reason: "its \(what) has no NUL within "
                            + PluginLimits.describe(bytes: PluginLimits.textBytes)))
            }
            return .success(text)
        }
        guard value.handler_count <= PluginLimits.handlers else {
            return refuse(
                "it claims \(value.handler_count) handlers, more than the \(PluginLimits.handlers) allowed")
        }
        guard value.invoke != nil else { return refuse("its invoke function is NULL") }
        var handlers: [String] = []
        if value.handler_count > 0 {
            guard let list = value.handlers else {
                return refuse("it claims \(value.handler_count) handlers but its handler list is NULL")
            }
            for index in 0..<value.handler_count {
                switch text(list[index], "handler name \(index + 1)") {
                case .success(let name?): handlers.append(name)
                case .success(nil): return refuse("its handler name \(index + 1) is NULL")
                case .failure(let error): return .failure(error)
                }
            }
        }
        let name: String?
        let version: String?
        let swiftVersion: String?
        switch (
            text(value.name, "name"), text(value.version, "version"),
            text(value.swift_version, "Swift version")
        ) {
        case (.success(let n), .success(let v), .success(let s)): (name, version, swiftVersion) = (n, v, s)
        case (.failure(let error), _, _), (_, .failure(let error), _), (_, _, .failure(let error)):
            return .failure(error)
        }
        let info = PluginDescription(
            name: name ?? "", version: version ?? "", swiftVersion: swiftVersion, handlers: handlers,
            path: path)
        return .success(LoadedPlugin(info: info, descriptor: descriptor))
    }

    /// Calls `invoke`, blocking the calling thread until the handler returns; for a process
    /// that does nothing else (`jobrunner plugin-call`).
    public func call(handler: String, request: [UInt8]) -> [UInt8] {
        invoke(handler: handler, request: request)
    }

    /// Calls `invoke`, blocking the calling thread until the handler returns. A response longer
    /// than `PluginLimits.responseBytes` is refused unread: the attempt fails, saying so.
    func invoke(handler: String, request: [UInt8]) -> [UInt8] {
        invoke(handler: handler, request: request) { Array($0) }
    }

    /// The same, handing the response to `read` where the plugin left it (it is freed after).
    func invoke<Answer>(handler: String, request: [UInt8], _ read: (UnsafeRawBufferPointer) -> Answer)
        -> Answer
    {
        let value = descriptor.pointee
        guard let invoke = value.invoke else {
            return Self.failure("the plugin has no invoke function").withUnsafeBytes(read)
        }
        var length = 0
        let response = request.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                invoke(value.context, handler, chars.baseAddress, chars.count, &length)
            }
        }
        guard let response else {
            return Self.failure("the plugin's invoke returned NULL").withUnsafeBytes(read)
        }
        defer { value.free_response?(value.context, response) }
        // `size_t` arrives as `Int`: a length of 2^63 or more reads as negative, and is as
        // much too long as any other.
        guard length >= 0, length <= PluginLimits.responseBytes else {
            return Self.failure(
                "the plugin's response claims \(UInt(bitPattern: length)) bytes, more than the "
                    + "\(PluginLimits.describe(bytes: PluginLimits.responseBytes)) a response may have"
            ).withUnsafeBytes(read)
        }
        return read(UnsafeRawBufferPointer(start: response, count: length))
    }

    /// Asks the plugin whether `parameters` (JSON) suit `handler`: nil when they do, else why not.
    /// A message with no NUL within `PluginLimits.textBytes` is not read past them: it is
    /// answered as a problem of its own.
    func check(handler: String, parameters: [UInt8]) -> String? {
        let value = descriptor.pointee
        guard let check = value.check_parameters else { return nil }
        let message = parameters.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                check(value.context, handler, chars.baseAddress, chars.count)
            }
        }
        guard let message else { return nil }
        defer { value.free_response?(value.context, message) }
        return PluginLimits.text(at: message)
            ?? "the plugin's parameter check answered with a message that has no NUL within "
            + "\(PluginLimits.describe(bytes: PluginLimits.textBytes)) (a bug in the plugin)"
    }

    /// A response that fails the attempt with `message`.
    private static func failure(_ message: String) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.member("message", message)
        writer.member("status", "failed")
        writer.endObject()
        return writer.bytes
    }
}
