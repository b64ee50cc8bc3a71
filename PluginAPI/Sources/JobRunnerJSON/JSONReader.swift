#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A strict cursor over JSON bytes, reading them where they lie: flat records (the store's
/// rows) and nested documents (the plugin ABI's requests and responses) alike.
///
/// It reads only what it is sure of. Every reading method answers nil (or false) on anything
/// unusual (an escaped key, a number out of range or with a fraction where a whole one is
/// read, invalid UTF-8, a lone surrogate, nesting deeper than ``depthLimit``, anything that is
/// not JSON) and sets ``failed``; its callers then decode the same bytes with `JSONDecoder`,
/// whose answer (a value or an error) stands. So this reader never has to match
/// `JSONDecoder`'s errors, only its values for the documents it accepts.
///
/// Methods that look (``take(_:)``, ``null()``, ``literal(_:)``, ``peek()``) do not fail: they
/// answer whether what they look for comes next.
public struct JSONReader {
    @usableFromInline let bytes: UnsafeRawBufferPointer
    @usableFromInline var position = 0
    @usableFromInline var didFail = false

    /// The deepest nesting ``skipValue()`` follows before giving up.
    public static let depthLimit = 64

    /// A reader of `bytes`, which must outlive it.
    @inlinable
    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The position of the next byte to read.
    @inlinable public var index: Int { position }

    /// Whether a reading method met something it does not read.
    @inlinable public var failed: Bool { didFail }

    /// Answers nil, noting that reading failed.
    @inlinable
    mutating func fail<Value>() -> Value? {
        didFail = true
        return nil
    }

    /// Answers false, noting that reading failed.
    @inlinable
    mutating func failure() -> Bool {
        didFail = true
        return false
    }

    /// Whether only whitespace is left.
    @inlinable
    public mutating func atEnd() -> Bool {
        skipWhitespace()
        return position == bytes.count
    }

    // MARK: Looking ahead

    /// The byte that comes next after whitespace, not consumed.
    @inlinable
    public mutating func peek() -> UInt8? {
        skipWhitespace()
        return position < bytes.count ? bytes[position] : nil
    }

    /// Consumes `byte` if it comes next after whitespace.
    @inlinable
    public mutating func take(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// Consumes `text` if it comes next, exactly (no whitespace before it): for bytes of a known
    /// shape, such as a member's name with its punctuation as a writer wrote it.
    @inlinable
    public mutating func literal(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.count - position >= count, let base = bytes.baseAddress,
            memcmp(base + position, text.utf8Start, count) == 0
        else { return false }
        position += count
        return true
    }

    /// Consumes `null` if it comes next.
    @inlinable
    public mutating func null() -> Bool {
        skipWhitespace()
        return literal("null")
    }

    // MARK: Containers

    /// Reads an object: `member` is called with each key (whose bytes are valid only during the
    /// call) and reads its value; it answers false to give up. False when the object is
    /// malformed, a key holds an escape or is not plain ASCII, or `member` gave up.
    @inlinable
    public mutating func object(_ member: (inout JSONReader, JSONKey) -> Bool) -> Bool {
        guard take(UInt8(ascii: "{")) else { return failure() }
        if take(UInt8(ascii: "}")) { return true }
        while true {
            guard let key = plainKey(), take(UInt8(ascii: ":")) else { return failure() }
            guard member(&self, key), !didFail else { return failure() }
            if take(UInt8(ascii: "}")) { return true }
            guard take(UInt8(ascii: ",")) else { return failure() }
        }
    }

    /// Reads an object whose members are all among `members`, each at most once: `body` reads
    /// each value but `null`, which is passed over as an absent optional (for a required member,
    /// the caller finds it missing). False for an unknown or repeated member, or when `body`
    /// gives up or a read in it fails. Members are looked for in the order they were written.
    @inlinable
    public mutating func object<Member>(
        _ members: JSONMembers<Member>, _ body: (Member, inout JSONReader) -> Bool
    ) -> Bool {
        var next = 0
        var seen: UInt64 = 0
        return object { reader, key in
            guard let found = members.find(key, from: &next), seen & (1 << found) == 0 else { return false }
            seen |= 1 << found
            if reader.null() { return true }
            return body(members.members[found], &reader)
        }
    }

    /// Reads an array: `element` reads each element; it answers false to give up.
    @inlinable
    public mutating func array(_ element: (inout JSONReader) -> Bool) -> Bool {
        guard take(UInt8(ascii: "[")) else { return failure() }
        if take(UInt8(ascii: "]")) { return true }
        repeat {
            guard element(&self), !didFail else { return failure() }
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "]")) || (failure())
    }

    /// An array of strings.
    @inlinable
    public mutating func strings() -> [String]? {
        var values: [String] = []
        let read = array { reader in
            guard let value = reader.string() else { return false }
            values.append(value)
            return true
        }
        return read ? values : nil
    }

    /// Moves past an array of strings, as ``strings()`` reads one, without keeping them.
    @inlinable
    public mutating func skipStrings() -> Bool {
        array { $0.skipString() }
    }

    /// An object whose values `value` reads, as a dictionary; nil on a repeated key or a value
    /// `value` cannot read.
    @inlinable
    public mutating func map<Value>(_ value: (inout JSONReader) -> Value?) -> [String: Value]? {
        var map: [String: Value] = [:]
        guard take(UInt8(ascii: "{")) else { return fail() }
        if take(UInt8(ascii: "}")) { return map }
        repeat {
            guard let key = string(), take(UInt8(ascii: ":")), let element = value(&self),
                map.updateValue(element, forKey: key) == nil
            else { return fail() }
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}")) ? map : fail()
    }

    /// An object whose values are all strings; nil on a repeated key.
    @inlinable
    public mutating func stringMap() -> [String: String]? {
        map { $0.string() }
    }

    /// `null` as `.some(nil)`, else what `read` reads; nil when neither can be read.
    @inlinable
    public mutating func nullable<Value>(_ read: (inout JSONReader) -> Value?) -> Value?? {
        if null() { return .some(nil) }
        return read(&self).map { .some($0) }
    }

    // MARK: Bytes

    /// JSON's whitespace: space, tab, line feed, carriage return.
    @inlinable
    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }
}
