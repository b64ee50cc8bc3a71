import JobRunnerJSON

/// A JSON-shaped value: the parameters of a job (`with:`) and what plugins exchange.
public enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value as a shell handler sees it in `JOBRUNNER_PARAM_<KEY>`:
    /// scalars as their text, lists and maps as compact JSON.
    public var environmentText: String {
        switch self {
        case .null: return ""
        case .bool(let value): return value ? "true" : "false"
        case .int(let value): return String(value)
        case .double(let value): return String(value)
        case .string(let value): return value
        case .array, .object: return jsonText
        }
    }

    /// Compact JSON text with sorted keys, so equal values print the same (line feeds, carriage
    /// returns and tabs in strings as `\n`, `\r` and `\t`).
    public var jsonText: String {
        var writer = JSONWriter(capacity: 64, style: .shortEscapes)
        writer.value(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Quotes and escapes a string as a JSON string literal, as ``jsonText`` writes one.
    public static func quote(_ text: String) -> String {
        String(decoding: JSONWriter.quoted(text, style: .shortEscapes), as: UTF8.self)
    }
}
