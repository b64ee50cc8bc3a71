@_exported import CJobRunnerPlugin
import Dispatch
import Foundation
import Synchronization

/// Exports a plugin's handlers through the C ABI of `jobrunner_plugin.h`.
///
/// A plugin library needs one function with C linkage, named `jobrunner_plugin_v1`:
///
/// ```swift
/// @_cdecl("jobrunner_plugin_v1")
/// public func jobrunnerPlugin() -> UnsafeRawPointer {
///     Plugin.export(name: "files", version: "1.0.0", handlers: [Refresh.self, Fetch.self])
/// }
/// ```
public enum Plugin {
    private static let exported = Mutex<[String: UInt]>([:])

    /// The descriptor for these handlers, made at the first call and kept for the life of the
    /// process, as the ABI asks.
    /// - Parameters:
    ///   - name: the plugin's name: the library is `lib<name>.so`, jobs say `<name>.<handler>`.
    ///   - version: the plugin's own version, shown by `jobrunner plugins`.
    ///   - handlers: the handler types; their `name`s must differ.
    public static func export(name: String, version: String, handlers: [any PluginHandler.Type])
        -> UnsafeRawPointer
    {
        let address = exported.withLock { table -> UInt in
            if let address = table[name] { return address }
            let address = UInt(bitPattern: makeDescriptor(name: name, version: version, handlers: handlers))
            table[name] = address
            return address
        }
        guard let pointer = UnsafeRawPointer(bitPattern: address) else {
            preconditionFailure("a descriptor is never at address 0")
        }
        return pointer
    }

    private static func makeDescriptor(name: String, version: String, handlers: [any PluginHandler.Type])
        -> UnsafeMutablePointer<jobrunner_plugin_descriptor>
    {
        var entries: [String: HandlerEntry] = [:]
        var names: [String] = []
        for type in handlers where entries[type.name] == nil {
            entries[type.name] = HandlerEntry(type)
            names.append(type.name)
        }
        let table = ExportedPlugin(handlers: entries)
        let namePointers = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(names.count, 1))
        for (index, handler) in names.enumerated() { namePointers[index] = UnsafePointer(strdup(handler)) }
        let descriptor = UnsafeMutablePointer<jobrunner_plugin_descriptor>.allocate(capacity: 1)
        descriptor.initialize(
            to: jobrunner_plugin_descriptor(
                abi_version: UInt32(JOBRUNNER_PLUGIN_ABI_VERSION),
                name: UnsafePointer(strdup(name)),
                version: UnsafePointer(strdup(version)),
                swift_version: UnsafePointer(strdup(swiftCompilerVersion)),
                handler_count: names.count,
                handlers: UnsafePointer(namePointers),
                context: Unmanaged.passRetained(table).toOpaque(),
                invoke: invokeEntry,
                check_parameters: checkEntry,
                free_response: freeEntry))
        return descriptor
    }
}

/// One handler, with its types erased: reads a request, checks parameters.
struct HandlerEntry: Sendable {
    /// Reads a request (its bytes are valid during the call only) and returns the handler's run
    /// of it, or the failure of a request that could not be read.
    let prepare: @Sendable (UnsafeRawBufferPointer) -> @Sendable () async -> PluginResponse
    let check: @Sendable (Data) -> String?

    init<H: PluginHandler>(_ type: H.Type) {
        prepare = { bytes in
            let request: PluginRequest<H.Parameters>
            do {
                request = try PluginRequest<H.Parameters>.decode(bytes)
            } catch {
                let response = PluginResponse(status: .failed, message: "bad request: \(describe(error))")
                return { response }
            }
            return {
                let context = HandlerContext(
                    jobID: request.job, runID: request.run, attempt: request.attempt,
                    parameters: request.parameters, outputs: request.needs, workingDirectory: request.workdir,
                    log: AttemptLog(path: request.log), notification: request.notify)
                do {
                    return PluginResponse(try await H().run(context))
                } catch {
                    return PluginResponse(status: .failed, message: describe(error))
                }
            }
        }
        check = { data in
            do {
                _ = try JSONDecoder().decode(H.Parameters.self, from: data)
                // Keys its Parameters never read are typos, not options: one line each.
                return ParameterKeys.unknownKeys(in: data, for: H.Parameters.self)
            } catch {
                return describe(error)
            }
        }
    }
}

/// The handlers of one exported plugin; the descriptor's `context`.
final class ExportedPlugin: Sendable {
    let handlers: [String: HandlerEntry]

    init(handlers: [String: HandlerEntry]) {
        self.handlers = handlers
    }

    /// Runs a handler to the end on the calling thread, which the ABI allows to block.
    func invoke(_ handler: String, _ request: UnsafeRawBufferPointer) -> PluginResponse {
        guard let entry = handlers[handler] else {
            return PluginResponse(status: .failed, message: "this plugin has no handler '\(handler)'")
        }
        let run = entry.prepare(request)
        let result = Mutex<PluginResponse?>(nil)
        let done = DispatchSemaphore(value: 0)
        let operation: @Sendable () async -> Void = {
            let response = await run()
            result.withLock { $0 = response }
            done.signal()
        }
        if #available(macOS 26, *) {
            // Runs on this thread up to the handler's first suspension: a handler that never
            // suspends (most quick ones) finishes without a hop to the cooperative pool and back.
            Task.immediateDetached(operation: operation)
        } else {
            Task.detached(operation: operation)
        }
        done.wait()
        return result.withLock { $0 }
            ?? PluginResponse(status: .failed, message: "the handler returned nothing")
    }
}

/// A malloc'd, NUL-terminated copy of `bytes`, as the ABI hands buffers out.
private func cBuffer(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar> {
    let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
    bytes.withUnsafeBytes { source in
        UnsafeMutableRawPointer(buffer).copyMemory(
            from: source.baseAddress ?? UnsafeRawPointer(buffer), byteCount: source.count)
    }
    buffer[bytes.count] = 0
    return buffer
}

private let invokeEntry:
    @convention(c) (
        UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int,
        UnsafeMutablePointer<Int>?
    ) -> UnsafeMutablePointer<CChar>? = { context, handler, request, length, responseLength in
        let response: PluginResponse
        if let context, let handler, let request {
            let plugin = Unmanaged<ExportedPlugin>.fromOpaque(context).takeUnretainedValue()
            response = plugin.invoke(
                String(cString: handler), UnsafeRawBufferPointer(start: request, count: max(length, 0)))
        } else {
            response = PluginResponse(status: .failed, message: "invoke was called with a NULL argument")
        }
        let bytes =
            response.jsonBytes
            ?? Array(#"{"status":"failed","message":"the response could not be encoded"}"#.utf8)
        responseLength?.pointee = bytes.count
        return cBuffer(bytes)
    }

private let checkEntry:
    @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int) ->
        UnsafeMutablePointer<CChar>? = { context, handler, parameters, length in
            guard let context, let handler, let parameters else { return nil }
            let plugin = Unmanaged<ExportedPlugin>.fromOpaque(context).takeUnretainedValue()
            let name = String(cString: handler)
            guard let entry = plugin.handlers[name] else {
                return cBuffer(Array("this plugin has no handler '\(name)'".utf8))
            }
            return entry.check(Data(bytes: UnsafeRawPointer(parameters), count: length)).map {
                cBuffer(Array($0.utf8))
            }
        }

private let freeEntry: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?) -> Void = {
    _, response in
    response?.deallocate()
}

/// Words for a thrown error: a decoding error names the parameter; others use their description.
func describe(_ error: any Error) -> String {
    func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
        (codingPath + (last.map { [$0] } ?? [])).map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            .joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
    }
    switch error {
    case DecodingError.keyNotFound(let key, let context):
        return "missing parameter '\(path(context.codingPath, key))'"
    case DecodingError.typeMismatch(let type, let context):
        return "parameter '\(path(context.codingPath))' should be \(words(for: type))"
    case DecodingError.valueNotFound(let type, let context):
        return "parameter '\(path(context.codingPath))' is null; it should be \(words(for: type))"
    case DecodingError.dataCorrupted(let context):
        let at = context.codingPath.isEmpty ? "" : "parameter '\(path(context.codingPath))': "
        return at + context.debugDescription
    case let error as any LocalizedError:
        return error.errorDescription ?? String(describing: error)
    default:
        return String(describing: error)
    }
}

private func words(for type: Any.Type) -> String {
    switch type {
    case is String.Type: return "a string"
    case is Bool.Type: return "true or false"
    case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type: return "a whole number"
    case is Double.Type, is Float.Type: return "a number"
    default:
        let name = String(describing: type)
        if name.hasPrefix("Array") { return "a list" }
        if name.hasPrefix("Dictionary") { return "a map" }
        return "a \(name)"
    }
}
