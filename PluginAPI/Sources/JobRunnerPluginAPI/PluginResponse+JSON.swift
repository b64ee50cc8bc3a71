import Foundation
import JobRunnerJSON

extension PluginResponse {
    /// The response's JSON, written directly: members in declaration order, absent ones left out,
    /// as `JSONEncoder` writes this type (JSONEncoder cost more than a quick handler's call).
    /// Nil when `retryAfter` is infinite or not a number, which JSON cannot hold.
    public var jsonBytes: [UInt8]? {
        var json = JSONWriter(capacity: 64)
        json.raw(#"{"status":"#)
        json.string(status.rawValue)
        json.member(raw: #","message":"#, message)
        if let retryAfter {
            guard retryAfter.isFinite else { return nil }
            json.member(raw: #","retryAfter":"#, retryAfter)
        }
        if let outputs {
            json.raw(#","outputs":"#)
            json.object(outputs)
        }
        json.raw("}")
        return json.bytes
    }

    /// Reads a response the quick way; nil when anything in it is unusual (see `JSONReader`),
    /// and then `JSONDecoder` decides. Unknown members are skipped, as `JSONDecoder` skips them.
    public init?(quickJSON bytes: UnsafeRawBufferPointer) {
        var reader = JSONReader(bytes)
        var status: Status?
        var message: String??
        var retryAfter: Double??
        var outputs: [String: String]??
        var others = Set<[UInt8]>()
        let read = reader.object { reader, key in
            if key.equals("status") {
                guard status == nil, let text = reader.string(), let value = Status(rawValue: text) else {
                    return false
                }
                status = value
            } else if key.equals("message") {
                guard message == nil, let value = reader.nullable({ $0.string() }) else { return false }
                message = value
            } else if key.equals("retryAfter") {
                guard retryAfter == nil, let value = reader.nullable({ $0.double() }) else { return false }
                retryAfter = value
            } else if key.equals("outputs") {
                guard outputs == nil, let value = reader.nullable({ $0.stringMap() }) else { return false }
                outputs = value
            } else {
                return others.insert(Array(key.bytes)).inserted && reader.skipValue()
            }
            return true
        }
        guard read, reader.atEnd(), let status else { return nil }
        self.init(
            status: status, message: message ?? nil, retryAfter: retryAfter ?? nil, outputs: outputs ?? nil)
    }

    /// Decodes a response: the quick way when it can, else with `JSONDecoder`.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> PluginResponse {
        if let response = PluginResponse(quickJSON: bytes) { return response }
        return try JSONDecoder().decode(PluginResponse.self, from: Data(bytes))
    }
}
