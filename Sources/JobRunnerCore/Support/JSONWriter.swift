import Foundation

/// Writes JSON directly into bytes, for the few documents written once per transition or per
/// attempt, where `JSONEncoder`'s generic machinery costs more than the work around it.
///
/// Objects are written member by member in the order given; a member whose value is nil is left
/// out, as `JSONEncoder` leaves out absent optionals. Dates are seconds since the reference date,
/// like `JSONEncoder`'s default strategy, so `JSONDecoder` reads everything back unchanged.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    /// Per open object or array: whether it has an element yet.
    private var started: [Bool] = []

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// Hands over the bytes written so far and starts afresh, within the same containers: a long
    /// document can be written out piece by piece.
    public mutating func drain() -> [UInt8] {
        defer { bytes.removeAll(keepingCapacity: true) }
        return bytes
    }

    /// A line break between elements, for documents meant to be read by people too.
    public mutating func newline() { bytes.append(UInt8(ascii: "\n")) }

    /// A member whose value is `null` when nil (JSON for people and tools that expect every key).
    public mutating func nullable(_ name: String, _ value: String?) {
        key(name)
        if let value { string(value) } else { self.value(.null) }
    }

    public mutating func nullable(_ name: String, _ value: (some BinaryInteger)?) {
        key(name)
        if let value { integer(value) } else { self.value(.null) }
    }

    /// A member whose value is `null` when nil, else a string written from `utf8` as it is:
    /// for text made in place that needs no escape (no quote, backslash or control character),
    /// such as a formatted date, without making a `String` of it.
    public mutating func nullable(_ name: String, unescaped utf8: UnsafeRawBufferPointer?) {
        key(name)
        guard let utf8 else { return value(.null) }
        assert(utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: utf8)
        bytes.append(UInt8(ascii: "\""))
    }

    // MARK: Containers

    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    /// Starts an object member; its value is written next.
    public mutating func key(_ name: String) {
        separate()
        quoted(name)
        bytes.append(UInt8(ascii: ":"))
        if !started.isEmpty { started[started.count - 1] = false }
    }

    // MARK: Members (nil leaves the member out)

    public mutating func member(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    public mutating func member(_ name: String, _ value: (some BinaryInteger)?) {
        guard let value else { return }
        key(name)
        integer(value)
    }

    public mutating func member(_ name: String, _ value: Bool) {
        key(name)
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func member(_ name: String, _ value: Date?) {
        guard let value else { return }
        key(name)
        double(value.timeIntervalSinceReferenceDate)
    }

    public mutating func member(_ name: String, _ values: [String]) {
        key(name)
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    public mutating func member(_ name: String, _ values: [String: String]) {
        key(name)
        object(values)
    }

    public mutating func member(_ name: String, _ value: JSONValue) {
        key(name)
        self.value(value)
    }

    // MARK: Values

    public mutating func string(_ value: String) {
        separate()
        quoted(value)
    }

    public mutating func integer(_ value: some BinaryInteger) {
        separate()
        guard let value = Int64(exactly: value) else { return bytes.append(contentsOf: String(value).utf8) }
        Self.appendDecimal(value, to: &bytes)
    }

    /// Appends `value`'s decimal digits, as JSON writes a number. The digits are written in
    /// place: making a String of each number cost more than the rest of a record (two records
    /// are written on every transition).
    public static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var rest = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// A Double's description is the shortest text that reads back as the same Double. JSON has
    /// no infinity or NaN: those are written as null.
    public mutating func double(_ value: Double) {
        separate()
        bytes.append(contentsOf: (value.isFinite ? value.description : "null").utf8)
    }

    /// An object of strings, members in key order.
    public mutating func object(_ values: [String: String]) {
        beginObject()
        for key in values.keys.sorted() {
            member(key, values[key])
        }
        endObject()
    }

    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null:
            separate()
            bytes.append(contentsOf: "null".utf8)
        case .bool(let flag):
            separate()
            bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let number): integer(number)
        case .double(let number): double(number)
        case .string(let text): string(text)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let members):
            beginObject()
            for name in members.keys.sorted() {
                key(name)
                if let member = members[name] { self.value(member) }
            }
            endObject()
        }
    }

    // MARK: Bytes

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        started.append(false)
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        started.removeLast()
    }

    /// A comma before every element but the first of its container.
    private mutating func separate() {
        guard let last = started.last else { return }
        if last {
            bytes.append(UInt8(ascii: ","))
        } else {
            started[started.count - 1] = true
        }
    }

    private mutating func quoted(_ value: String) {
        Self.appendQuoted(value, to: &bytes)
    }

    /// Appends `value` as a JSON string, as every string of this writer is written: quote,
    /// backslash and control characters escaped, the rest as UTF-8. For a document whose
    /// fixed parts are written as bytes made once (`status --json`, a line per job).
    public static func appendQuoted(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            // Most strings (ids, paths, states) need no escape: copy them whole.
            if utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
                bytes.append(contentsOf: utf8)
                return
            }
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    bytes.append(UInt8(ascii: "\\"))
                    bytes.append(byte)
                case 0..<0x20:
                    bytes.append(contentsOf: "\\u00".utf8)
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0xF)])
                default:
                    bytes.append(byte)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
