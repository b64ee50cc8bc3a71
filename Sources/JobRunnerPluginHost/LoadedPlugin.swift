import Foundation
import JobRunnerPluginAPI

/// A plugin library that was loaded and checked: its descriptor, read once.
///
/// The library stays loaded for the life of the process (it is never `dlclose`d: Swift code
/// and metadata of a closed library could still be referenced).
public final class LoadedPlugin: @unchecked Sendable {
    // @unchecked: the descriptor and what it points to are immutable for the life of the
    // process (the ABI requires it), and the ABI allows `invoke` from several threads.
    public let name: String
    public let version: String
    /// The Swift compiler version the plugin reports; nil for a plugin written in C.
    public let swiftVersion: String?
    public let handlers: [String]
    /// The library's path.
    public let path: String
    private let descriptor: UnsafePointer<jobrunner_plugin_descriptor>

    init(path: String, descriptor: UnsafePointer<jobrunner_plugin_descriptor>) {
        self.path = path
        self.descriptor = descriptor
        let value = descriptor.pointee
        name = value.name.map { String(cString: $0) } ?? ""
        version = value.version.map { String(cString: $0) } ?? ""
        swiftVersion = value.swift_version.map { String(cString: $0) }
        var names: [String] = []
        if let list = value.handlers {
            for index in 0..<value.handler_count {
                if let name = list[index] { names.append(String(cString: name)) }
            }
        }
        handlers = names
    }

    /// Calls `invoke`, blocking the calling thread until the handler returns; for a process
    /// that does nothing else (`jobrunner plugin-call`).
    public func call(handler: String, request: [UInt8]) -> [UInt8] {
        invoke(handler: handler, request: request)
    }

    /// Calls `invoke`, blocking the calling thread until the handler returns.
    func invoke(handler: String, request: [UInt8]) -> [UInt8] {
        let value = descriptor.pointee
        guard let invoke = value.invoke else {
            return Array(#"{"status":"failed","message":"the plugin has no invoke function"}"#.utf8)
        }
        var length = 0
        let response = request.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                invoke(value.context, handler, chars.baseAddress, chars.count, &length)
            }
        }
        guard let response else {
            return Array(#"{"status":"failed","message":"the plugin's invoke returned NULL"}"#.utf8)
        }
        defer { value.free_response?(value.context, response) }
        return Array(UnsafeRawBufferPointer(start: response, count: length))
    }

    /// Asks the plugin whether `parameters` (JSON) suit `handler`: nil when they do, else why not.
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
        return String(cString: message)
    }
}
