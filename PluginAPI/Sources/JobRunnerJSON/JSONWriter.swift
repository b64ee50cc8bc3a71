/// Writes JSON directly into bytes, for the documents written once per transition or per
/// attempt, where `JSONEncoder`'s generic machinery costs more than the work around it.
///
/// Two ways to write, which can be mixed:
///
/// - Structured: ``beginObject()``, ``key(_:)``, ``member(_:_:)-(String,String?)``, ``endObject()``
///   and the like put the commas in; a member whose value is nil is left out, as `JSONEncoder`
///   leaves out absent optionals.
/// - Literal: ``raw(_:)-(StaticString)`` writes fixed text as it is, and ``member(raw:_:)-(_,String?)``
///   writes a member whose name, comma, quotes and colon are one such literal (`,"state":`),
///   so a record of known shape is written with one copy per member name. The commas are then
///   the caller's.
///
/// Strings are escaped as its ``Style`` says; numbers are written as `String(describing:)`
/// writes them (a `Double`'s shortest text that reads back as the same `Double`), which
/// `JSONDecoder` reads back unchanged. Dates are the caller's (seconds since a reference date,
/// or ISO 8601 text): this module depends on nothing but the standard library.
public struct JSONWriter: Sendable {
    /// How strings (and whole doubles) are written: each style is one that some document has
    /// always been written in, kept so that its bytes stay as they were.
    public enum Style: Sendable, Hashable {
        /// Only what JSON requires: a quote and a backslash after a backslash, other control
        /// characters as `\u00xx`, everything else as its UTF-8. The stored records, `status
        /// --json` and the plugin ABI's documents.
        case compact
        /// As ``compact``, but a line feed, carriage return and tab as `\n`, `\r` and `\t`: the
        /// `--events` lines and a parameter's text.
        case shortEscapes
        /// As `JSONEncoder` writes with its default options: `\b`, `\f`, `\n`, `\r`, `\t`, a
        /// slash as `\/`, other control characters as `\u00xx`, and a whole `Double` without
        /// its `.0`. The records the store wrote with `JSONEncoder`.
        case foundation
    }

    /// The bytes written so far.
    @usableFromInline var buffer: [UInt8] = []
    /// Per open object or array: whether it has an element yet.
    @usableFromInline var started: [Bool] = []
    /// How strings and whole doubles are written.
    public let style: Style

    /// A writer with room for `capacity` bytes, writing strings in `style`.
    public init(capacity: Int = 256, style: Style = .compact) {
        buffer.reserveCapacity(capacity)
        self.style = style
    }

    /// The bytes written so far.
    public var bytes: [UInt8] { buffer }

    /// How many bytes have been written.
    public var count: Int { buffer.count }

    /// Hands over the bytes written so far and starts afresh, within the same containers: a long
    /// document can be written out piece by piece.
    public mutating func drain() -> [UInt8] {
        defer { buffer.removeAll(keepingCapacity: true) }
        return buffer
    }

    /// Forgets what was written, keeping the room: the next document is written into the same
    /// bytes (the store writes row after row so).
    public mutating func clear() {
        buffer.removeAll(keepingCapacity: true)
        started.removeAll(keepingCapacity: true)
    }

    // MARK: Literal text

    /// Writes `text` as it is: a member's name with its punctuation, a bracket. It must be
    /// JSON that needs no escape.
    @inlinable
    public mutating func raw(_ text: StaticString) {
        buffer.append(
            contentsOf: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Writes `text` as it is (text made in place, such as a formatted date).
    @inlinable
    public mutating func raw(_ text: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: text)
    }

    /// Writes `text` as it is.
    @inlinable
    public mutating func raw(_ text: [UInt8]) {
        buffer.append(contentsOf: text)
    }

    /// Hands the bytes to `body` to write into in place (as it is: the caller writes valid JSON).
    @inlinable
    public mutating func withRawBytes<Result>(_ body: (inout [UInt8]) throws -> Result) rethrows -> Result {
        try body(&buffer)
    }

    /// A member whose name is a literal with its punctuation (`,"name":`), then `value`; nothing
    /// at all when `value` is nil.
    @inlinable
    public mutating func member(raw name: StaticString, _ value: String?) {
        guard let value else { return }
        raw(name)
        string(value)
    }

    /// A member whose name is a literal with its punctuation, then `value` in decimal; nothing
    /// at all when `value` is nil.
    @inlinable
    public mutating func member(raw name: StaticString, _ value: (some BinaryInteger)?) {
        guard let value else { return }
        raw(name)
        integer(value)
    }

    /// A member whose name is a literal with its punctuation, then `value`; nothing at all when
    /// `value` is nil.
    @inlinable
    public mutating func member(raw name: StaticString, _ value: Double?) {
        guard let value else { return }
        raw(name)
        double(value)
    }

    // MARK: Containers

    /// Opens an object.
    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    /// Closes the object opened last.
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    /// Opens an array.
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    /// Closes the array opened last.
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    /// A line break between elements, for documents meant to be read by people too.
    public mutating func newline() { buffer.append(UInt8(ascii: "\n")) }

    /// Starts an object member; its value is written next.
    public mutating func key(_ name: String) {
        separate()
        quoted(name)
        buffer.append(UInt8(ascii: ":"))
        if !started.isEmpty { started[started.count - 1] = false }
    }

    // MARK: Members (nil leaves the member out)

    /// A string member, left out when nil.
    public mutating func member(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    /// An integer member, left out when nil.
    @inlinable
    public mutating func member(_ name: String, _ value: (some BinaryInteger)?) {
        guard let value else { return }
        key(name)
        integer(value)
    }

    /// A number member, left out when nil.
    public mutating func member(_ name: String, _ value: Double?) {
        guard let value else { return }
        key(name)
        double(value)
    }

    /// A `true` or `false` member.
    public mutating func member(_ name: String, _ value: Bool) {
        key(name)
        bool(value)
    }

    /// An array of strings.
    public mutating func member(_ name: String, _ values: [String]) {
        key(name)
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    /// An object of strings, members in key order.
    public mutating func member(_ name: String, _ values: [String: String]) {
        key(name)
        object(values)
    }

    /// A member whose value is `null` when nil (JSON for people and tools that expect every key).
    public mutating func nullable(_ name: String, _ value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }

    /// An integer member whose value is `null` when nil.
    public mutating func nullable(_ name: String, _ value: (some BinaryInteger)?) {
        key(name)
        if let value { integer(value) } else { null() }
    }

    /// A member whose value is `null` when nil, else a string written from `utf8` as it is:
    /// for text made in place that needs no escape (no quote, backslash or control character),
    /// such as a formatted date, without making a `String` of it.
    public mutating func nullable(_ name: String, unescaped utf8: UnsafeRawBufferPointer?) {
        key(name)
        guard let utf8 else { return null() }
        assert(!utf8.contains { Self.needsEscape($0, style: style) })
        separate()
        buffer.append(UInt8(ascii: "\""))
        buffer.append(contentsOf: utf8)
        buffer.append(UInt8(ascii: "\""))
    }

    // MARK: Values

    /// A string, escaped as ``style`` says.
    @inlinable
    public mutating func string(_ value: String) {
        separate()
        quoted(value)
    }

    /// `null`.
    public mutating func null() {
        separate()
        raw("null")
    }

    /// `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        if value { raw("true") } else { raw("false") }
    }

    /// An integer in decimal, as `String(value)` writes it. Generic and inlinable, so the
    /// conversion is specialized for each integer type a caller writes; the digits are written
    /// in place (making a `String` of each number cost more than the rest of a record).
    @inlinable
    public mutating func integer(_ value: some BinaryInteger) {
        separate()
        if let small = Int64(exactly: value) {
            Self.appendDecimal(small, to: &buffer)
        } else {
            buffer.append(contentsOf: String(value).utf8)
        }
    }

    /// A number: its shortest text that reads back as the same `Double` (in ``Style/foundation``
    /// a whole one without its `.0`, as `JSONEncoder` writes it). JSON has no infinity or NaN:
    /// those are written as `null`.
    public mutating func double(_ value: Double) {
        separate()
        guard value.isFinite else { return raw("null") }
        var text = value.description
        if style == .foundation, text.hasSuffix(".0") { text.removeLast(2) }
        buffer.append(contentsOf: text.utf8)
    }

    /// An object of strings, members in key order.
    public mutating func object(_ values: [String: String]) {
        beginObject()
        for key in values.keys.sorted() {
            member(key, values[key])
        }
        endObject()
    }

    /// Appends `value`'s decimal digits to `bytes`, as JSON writes a number.
    @inlinable
    public static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var rest = value.magnitude
        if rest < 10 { return bytes.append(UInt8(ascii: "0") + UInt8(rest)) }
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

    // MARK: Bytes

    @usableFromInline mutating func open(_ bracket: UInt8) {
        separate()
        buffer.append(bracket)
        started.append(false)
    }

    @usableFromInline mutating func close(_ bracket: UInt8) {
        buffer.append(bracket)
        started.removeLast()
    }

    /// A comma before every element but the first of its container (nothing outside any).
    @inlinable
    mutating func separate() {
        guard let last = started.last else { return }
        if last {
            buffer.append(UInt8(ascii: ","))
        } else {
            started[started.count - 1] = true
        }
    }

    /// `value` between quotes: copied whole when nothing in it needs an escape (ids, paths,
    /// states), else byte by byte.
    @inlinable
    mutating func quoted(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            buffer.append(UInt8(ascii: "\""))
            if utf8.contains(where: { Self.needsEscape($0, style: style) }) {
                Self.appendEscaped(UnsafeRawBufferPointer(utf8), style: style, to: &buffer)
            } else {
                buffer.append(contentsOf: utf8)
            }
            buffer.append(UInt8(ascii: "\""))
        }
    }

    /// Whether `byte` is written as an escape in `style`.
    @inlinable
    static func needsEscape(_ byte: UInt8, style: Style) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
            || (byte == UInt8(ascii: "/") && style == .foundation)
    }

    /// Appends `text` to `bytes` as the inside of a JSON string, its escapes as `style` writes
    /// them.
    @usableFromInline
    static func appendEscaped(_ text: UnsafeRawBufferPointer, style: Style, to bytes: inout [UInt8]) {
        for byte in text {
            switch (byte, style) {
            case (UInt8(ascii: "\""), _), (UInt8(ascii: "\\"), _), (UInt8(ascii: "/"), .foundation):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(byte)
            case (0x0A, .shortEscapes), (0x0A, .foundation):
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case (0x0D, .shortEscapes), (0x0D, .foundation):
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case (0x09, .shortEscapes), (0x09, .foundation):
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case (0x08, .foundation): bytes.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case (0x0C, .foundation): bytes.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case (0..<0x20, _):
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0xF)])
            default:
                bytes.append(byte)
            }
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}

extension JSONWriter {
    /// `text` as a JSON string in `style`, quotes included.
    public static func quoted(_ text: String, style: Style = .compact) -> [UInt8] {
        var writer = JSONWriter(capacity: text.utf8.count + 2, style: style)
        writer.string(text)
        return writer.buffer
    }
}
