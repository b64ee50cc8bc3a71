/// A strict reader of the small JSON documents of the plugin ABI (requests, responses), reading
/// the bytes where they lie.
///
/// It reads only what it is sure of: every method answers nil (or false) on anything unusual
/// (an escaped key, a duplicate member, a number out of range, invalid UTF-8, deep nesting,
/// anything that is not JSON), and its callers then decode the same bytes with `JSONDecoder`,
/// whose answer (a value or an error) stands. So this reader never has to match
/// `JSONDecoder`'s errors, only its values for the documents it accepts.
package struct JSONReader {
    private let bytes: UnsafeRawBufferPointer
    /// The position of the next byte to read.
    package private(set) var index = 0

    /// The deepest nesting `skipValue` follows before giving up.
    static let depthLimit = 64

    package init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Whether only whitespace is left.
    package mutating func atEnd() -> Bool {
        skipWhitespace()
        return index == bytes.count
    }

    /// Reads an object: `member` is called with each key's bytes (which are valid only during the
    /// call) and reads its value; it answers false to give up. False when the object is malformed,
    /// a key holds an escape or is not ASCII, or `member` gave up.
    package mutating func object(_ member: (inout JSONReader, UnsafeRawBufferPointer) -> Bool) -> Bool {
        guard take(UInt8(ascii: "{")) else { return false }
        if take(UInt8(ascii: "}")) { return true }
        while true {
            guard let key = plainKey(), take(UInt8(ascii: ":")), member(&self, key) else { return false }
            if take(UInt8(ascii: "}")) { return true }
            guard take(UInt8(ascii: ",")) else { return false }
        }
    }

    /// Consumes `null` if it comes next.
    package mutating func null() -> Bool {
        skipWhitespace()
        guard bytes.count - index >= 4, bytes[index] == UInt8(ascii: "n"),
            bytes[index + 1] == UInt8(ascii: "u"),
            bytes[index + 2] == UInt8(ascii: "l"), bytes[index + 3] == UInt8(ascii: "l")
        else { return false }
        index += 4
        return true
    }

    /// `null` as `.some(nil)`, else what `read` reads; nil when neither can be read.
    package mutating func nullable<Value>(_ read: (inout JSONReader) -> Value?) -> Value?? {
        if null() { return .some(nil) }
        return read(&self).map { .some($0) }
    }

    /// An object whose values are all strings, as `[String: String]`; nil on a duplicate key.
    package mutating func stringMap() -> [String: String]? {
        map { $0.string() }
    }

    /// An object whose values `value` reads, as a dictionary; nil on a duplicate key or a value
    /// `value` cannot read.
    package mutating func map<Value>(_ value: (inout JSONReader) -> Value?) -> [String: Value]? {
        var map: [String: Value] = [:]
        guard take(UInt8(ascii: "{")) else { return nil }
        if take(UInt8(ascii: "}")) { return map }
        while true {
            guard let key = string(), take(UInt8(ascii: ":")), let element = value(&self),
                map.updateValue(element, forKey: key) == nil
            else { return nil }
            if take(UInt8(ascii: "}")) { return map }
            guard take(UInt8(ascii: ",")) else { return nil }
        }
    }

    // MARK: Strings

    /// A string, its escapes resolved. Nil on a control character, an escape that is not JSON, an
    /// unpaired surrogate or invalid UTF-8.
    package mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return ascii ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { return escapedString(from: start) }
            if byte < 0x20 { return nil }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        return nil
    }

    /// The rest of a string that holds an escape, from `start` (just after the opening quote).
    private mutating func escapedString(from start: Int) -> String? {
        var utf8 = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = escapedScalar() else { return nil }
                    utf8.append(contentsOf: String(Character(scalar)).utf8)
                default: return nil
                }
            case 0..<0x20:
                return nil
            default:
                utf8.append(byte)
            }
        }
        return nil
    }

    /// The scalar of a `\uXXXX` escape whose `\u` was read, with the low half of a surrogate pair.
    private mutating func escapedScalar() -> Unicode.Scalar? {
        guard let unit = hexUnit() else { return nil }
        switch unit {
        case 0xD800..<0xDC00:
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                bytes[index + 1] == UInt8(ascii: "u")
            else { return nil }
            index += 2
            guard let low = hexUnit(), (0xDC00..<0xE000).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
        case 0xDC00..<0xE000:
            return nil
        default:
            return Unicode.Scalar(unit)
        }
    }

    /// Four hex digits.
    private mutating func hexUnit() -> UInt32? {
        guard bytes.count - index >= 4 else { return nil }
        var unit: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            unit = unit << 4 | UInt32(digit)
            index += 1
        }
        return unit
    }

    /// A key's bytes between its quotes; nil when it holds an escape, a control character or
    /// anything but ASCII (the members of the ABI are ASCII; others are skipped).
    private mutating func plainKey() -> UnsafeRawBufferPointer? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return UnsafeRawBufferPointer(rebasing: bytes[start..<index - 1])
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { return nil }
            index += 1
        }
        return nil
    }

    // MARK: Numbers

    /// A whole number written without fraction or exponent, within Int64.
    package mutating func integer() -> Int? {
        skipWhitespace()
        let start = index
        guard let end = numberEnd() else { return nil }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        guard !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) else { return nil }
        index = end
        return Int(text)
    }

    /// A number as a finite Double.
    package mutating func double() -> Double? {
        skipWhitespace()
        let start = index
        guard let end = numberEnd() else { return nil }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { return nil }
        index = end
        return value
    }

    /// The end of the JSON number that starts at `index` (which is not moved): `-`, then `0` or a
    /// digit other than 0 followed by digits, an optional fraction, an optional exponent.
    private func numberEnd() -> Int? {
        var end = index
        func digits() -> Bool {
            let first = end
            while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) { end += 1 }
            return end > first
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "-") { end += 1 }
        guard end < bytes.count else { return nil }
        if bytes[end] == UInt8(ascii: "0") {
            end += 1
            // JSON allows `0e3`, JSONDecoder does not: not this reader's to decide.
            if end < bytes.count, bytes[end] == UInt8(ascii: "e") || bytes[end] == UInt8(ascii: "E") {
                return nil
            }
        } else if !digits() {
            return nil
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: ".") {
            end += 1
            guard digits() else { return nil }
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "e") || bytes[end] == UInt8(ascii: "E") {
            end += 1
            if end < bytes.count, bytes[end] == UInt8(ascii: "+") || bytes[end] == UInt8(ascii: "-") {
                end += 1
            }
            guard digits() else { return nil }
        }
        return end
    }

    // MARK: Any value

    /// Steps over one value of any kind, checking it is JSON; false when it is not, or nests
    /// deeper than `depthLimit`.
    package mutating func skipValue(depth: Int = 0) -> Bool {
        guard depth < Self.depthLimit else { return false }
        skipWhitespace()
        guard index < bytes.count else { return false }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            return string() != nil
        case UInt8(ascii: "{"):
            index += 1
            if take(UInt8(ascii: "}")) { return true }
            while true {
                guard string() != nil, take(UInt8(ascii: ":")), skipValue(depth: depth + 1) else {
                    return false
                }
                if take(UInt8(ascii: "}")) { return true }
                guard take(UInt8(ascii: ",")) else { return false }
            }
        case UInt8(ascii: "["):
            index += 1
            if take(UInt8(ascii: "]")) { return true }
            while true {
                guard skipValue(depth: depth + 1) else { return false }
                if take(UInt8(ascii: "]")) { return true }
                guard take(UInt8(ascii: ",")) else { return false }
            }
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return null()
        default:
            guard let end = numberEnd() else { return false }
            index = end
            return true
        }
    }

    /// The byte that comes next after whitespace, not consumed.
    package mutating func peek() -> UInt8? {
        skipWhitespace()
        return index < bytes.count ? bytes[index] : nil
    }

    // MARK: Bytes

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    /// Consumes `byte` if it comes next after whitespace.
    private mutating func take(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// JSON's whitespace: space, tab, line feed, carriage return.
    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }
}

extension UnsafeRawBufferPointer {
    /// Whether these bytes are `text`'s UTF-8.
    package func equals(_ text: StaticString) -> Bool {
        count == text.utf8CodeUnitCount
            && elementsEqual(UnsafeRawBufferPointer(start: text.utf8Start, count: count))
    }
}
