import Foundation

extension PluginResponse {
    /// The response's JSON, written directly: members in declaration order, absent ones left out,
    /// as `JSONEncoder` writes this type (JSONEncoder cost more than a quick handler's call).
    /// Nil when `retryAfter` is infinite or not a number, which JSON cannot hold.
    package var jsonBytes: [UInt8]? {
        var json: [UInt8] = []
        json.reserveCapacity(64)
        json.append(contentsOf: #"{"status":"#.utf8)
        appendQuoted(status.rawValue, to: &json)
        if let message {
            json.append(contentsOf: #","message":"#.utf8)
            appendQuoted(message, to: &json)
        }
        if let retryAfter {
            guard retryAfter.isFinite else { return nil }
            json.append(contentsOf: #","retryAfter":"#.utf8)
            json.append(contentsOf: retryAfter.description.utf8)
        }
        if let outputs {
            json.append(contentsOf: #","outputs":{"#.utf8)
            for (index, key) in outputs.keys.sorted().enumerated() {
                if index > 0 { json.append(UInt8(ascii: ",")) }
                appendQuoted(key, to: &json)
                json.append(UInt8(ascii: ":"))
                appendQuoted(outputs[key] ?? "", to: &json)
            }
            json.append(UInt8(ascii: "}"))
        }
        json.append(UInt8(ascii: "}"))
        return json
    }

    /// Reads a response the quick way; nil when anything in it is unusual (see `JSONReader`),
    /// and then `JSONDecoder` decides. Unknown members are skipped, as `JSONDecoder` skips them.
    package init?(quickJSON bytes: UnsafeRawBufferPointer) {
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
                return others.insert(Array(key)).inserted && reader.skipValue()
            }
            return true
        }
        guard read, reader.atEnd(), let status else { return nil }
        self.init(
            status: status, message: message ?? nil, retryAfter: retryAfter ?? nil, outputs: outputs ?? nil)
    }

    /// Decodes a response: the quick way when it can, else with `JSONDecoder`.
    package static func decode(_ bytes: UnsafeRawBufferPointer) throws -> PluginResponse {
        if let response = PluginResponse(quickJSON: bytes) { return response }
        return try JSONDecoder().decode(PluginResponse.self, from: Data(bytes))
    }
}

/// `text` as a JSON string: quote, backslash and control characters escaped, the rest as UTF-8.
package func appendQuoted(_ text: String, to json: inout [UInt8]) {
    json.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
            json.append(UInt8(ascii: "\\"))
            json.append(byte)
        case 0..<0x20:
            json.append(contentsOf: "\\u00".utf8)
            json.append(hexDigits[Int(byte >> 4)])
            json.append(hexDigits[Int(byte & 0xF)])
        default:
            json.append(byte)
        }
    }
    json.append(UInt8(ascii: "\""))
}

private let hexDigits = Array("0123456789abcdef".utf8)
