#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The values ``JSONReader`` reads: strings, numbers, `true` and `false`, and any value it
/// steps over.
extension JSONReader {
    // MARK: Scalars

    /// `true` or `false`.
    @inlinable
    public mutating func bool() -> Bool? {
        skipWhitespace()
        if literal("true") { return true }
        if literal("false") { return false }
        return fail()
    }

    /// A string, its escapes resolved. Nil on a control character, an escape that is not JSON, a
    /// lone surrogate or invalid UTF-8.
    @inlinable
    public mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return fail() }
        let start = position
        // The common case: no escape, read in one go; ASCII (ids, states, pipelines) needs no
        // validation, and `String(validating:)` costs more than the rest of the reading.
        var ascii = true
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let text = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
                position += 1
                if ascii { return String(decoding: text, as: UTF8.self) }
                return String(validating: text, as: UTF8.self) ?? fail()
            }
            if byte == UInt8(ascii: "\\") { return escapedString(from: start) }
            if byte < 0x20 { return fail() }
            if byte >= 0x80 { ascii = false }
            position += 1
        }
        return fail()
    }

    /// Moves past a string, checking it as ``string()`` does.
    @inlinable
    public mutating func skipString() -> Bool {
        string() != nil
    }

    /// The bytes between the quotes of a string of printable ASCII without an escape, which must
    /// come next exactly (no whitespace before it); nil, without failing, for any other. For
    /// bytes of a known shape; valid as long as the reader's bytes are.
    @inlinable
    public mutating func plainString() -> UnsafeRawBufferPointer? {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        let start = position + 1
        var end = start
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                position = end + 1
                return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            end += 1
        }
        return nil
    }

    /// The rest of a string that holds an escape, from `start` (just after the opening quote).
    @usableFromInline
    mutating func escapedString(from start: Int) -> String? {
        var utf8 = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: utf8, as: UTF8.self) ?? fail()
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { return fail() }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = escapedScalar() else { return fail() }
                    UTF8.encode(scalar) { utf8.append($0) }
                default: return fail()
                }
            case 0..<0x20:
                return fail()
            default:
                utf8.append(byte)
            }
        }
        return fail()
    }

    /// The scalar of a `\uXXXX` escape whose `\u` was read, with the low half of a surrogate
    /// pair; nil for a lone half.
    mutating func escapedScalar() -> Unicode.Scalar? {
        guard let unit = hexUnit() else { return nil }
        switch unit {
        case 0xD800..<0xDC00:
            guard bytes.count - position >= 6, bytes[position] == UInt8(ascii: "\\"),
                bytes[position + 1] == UInt8(ascii: "u")
            else { return nil }
            position += 2
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
        guard bytes.count - position >= 4 else { return nil }
        var unit: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            unit = unit << 4 | UInt32(digit)
            position += 1
        }
        return unit
    }

    /// A key between its quotes; nil when it holds an escape, a control character or anything
    /// but ASCII (the members this reader is asked for are plain ASCII; `JSONDecoder` reads the
    /// rest).
    @inlinable
    mutating func plainKey() -> JSONKey? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return JSONKey(bytes: UnsafeRawBufferPointer(rebasing: bytes[start..<position - 1]))
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { return nil }
            position += 1
        }
        return nil
    }

    // MARK: Numbers

    /// A whole number as JSON writes one (an optional minus sign, then digits, no leading zero),
    /// within `Int`; nil for one with a fraction or an exponent, which `JSONDecoder` may read
    /// otherwise.
    @inlinable
    public mutating func integer() -> Int? {
        skipWhitespace()
        let negative = position < bytes.count && bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        let start = position
        // Summed on the negative side, which also holds Int.min.
        var value = 0
        while position < bytes.count, bytes[position] &- UInt8(ascii: "0") < 10 {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, under) = times.subtractingReportingOverflow(Int(bytes[position] &- UInt8(ascii: "0")))
            guard !overflow, !under else { return fail() }
            value = sum
            position += 1
        }
        // `01` is not JSON; `JSONDecoder` refuses it.
        guard position > start, bytes[start] != UInt8(ascii: "0") || position == start + 1 else {
            return fail()
        }
        if position < bytes.count,
            bytes[position] == UInt8(ascii: ".") || bytes[position] == UInt8(ascii: "e")
                || bytes[position] == UInt8(ascii: "E")
        {
            return fail()
        }
        if negative { return value }
        return value == Int.min ? fail() : -value
    }

    /// A number as a finite `Double`; nil for text JSON does not allow as a number (`+1`, `01`,
    /// `1.`, `0e3`, which `JSONDecoder` refuses too) or one beyond a `Double`'s range.
    @inlinable
    public mutating func double() -> Double? {
        skipWhitespace()
        guard let end = numberEnd() else { return fail() }
        let value = Self.parseDouble(UnsafeRawBufferPointer(rebasing: bytes[position..<end]))
        guard let value, value.isFinite else { return fail() }
        position = end
        return value
    }

    /// The value of the number `text` (checked as JSON): `strtod` on a copy ended by NUL,
    /// without making a `String` (a date has 17 digits or more, past a `String`'s inline room);
    /// nil when `strtod` does not read it whole (a locale with a decimal comma).
    @usableFromInline
    static func parseDouble(_ text: UnsafeRawBufferPointer) -> Double? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: text.count + 1) { copy -> Double? in
            guard let base = copy.baseAddress else { return nil }
            for offset in 0..<text.count { copy[offset] = CChar(bitPattern: text[offset]) }
            copy[text.count] = 0
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(base, &end)
            return end == base + text.count ? value : nil
        }
    }

    /// The end of the JSON number that starts at the cursor (which is not moved): `-`, then `0`
    /// or a digit other than 0 followed by digits, an optional fraction, an optional exponent.
    @usableFromInline
    func numberEnd() -> Int? {
        var end = position
        func digits() -> Bool {
            let first = end
            while end < bytes.count, bytes[end] &- UInt8(ascii: "0") < 10 { end += 1 }
            return end > first
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "-") { end += 1 }
        guard end < bytes.count else { return nil }
        if bytes[end] == UInt8(ascii: "0") {
            end += 1
            // JSON allows `0e3`, `JSONDecoder` does not: not this reader's to decide.
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
    /// deeper than ``depthLimit``.
    public mutating func skipValue() -> Bool {
        skipValue(depth: 0)
    }

    private mutating func skipValue(depth: Int) -> Bool {
        guard depth < Self.depthLimit, let next = peek() else { return failure() }
        switch next {
        case UInt8(ascii: "\""):
            return skipString()
        case UInt8(ascii: "{"):
            position += 1
            if take(UInt8(ascii: "}")) { return true }
            repeat {
                guard skipString(), take(UInt8(ascii: ":")), skipValue(depth: depth + 1) else {
                    return failure()
                }
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "}")) || (failure())
        case UInt8(ascii: "["):
            position += 1
            if take(UInt8(ascii: "]")) { return true }
            repeat {
                guard skipValue(depth: depth + 1) else { return false }
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "]")) || (failure())
        case UInt8(ascii: "t"): return literal("true") || (failure())
        case UInt8(ascii: "f"): return literal("false") || (failure())
        case UInt8(ascii: "n"): return literal("null") || (failure())
        default:
            guard let end = numberEnd() else { return failure() }
            position = end
            return true
        }
    }
}
