#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An object's key as ``JSONReader`` hands it over: its bytes between the quotes, plain ASCII,
/// valid only while the member is read.
public struct JSONKey {
    /// The key's bytes.
    public let bytes: UnsafeRawBufferPointer

    /// A key of `bytes`.
    @inlinable
    public init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Whether the key is `name`.
    @inlinable
    public func equals(_ name: StaticString) -> Bool {
        bytes.count == name.utf8CodeUnitCount
            && (bytes.count == 0 || memcmp(bytes.baseAddress!, name.utf8Start, bytes.count) == 0)
    }
}

/// The members of a record as ``JSONReader/object(_:_:)-(JSONMembers<Member>,_)`` matches
/// them: their names' bytes, in the order they are written, so that each is found with one
/// comparison when they come in that order.
public struct JSONMembers<Member> {
    @usableFromInline let names: [[UInt8]]
    @usableFromInline let members: [Member]

    /// The members and their names, in the order they are written; at most 64.
    public init(_ members: [(name: String, member: Member)]) {
        precondition(members.count <= 64, "a record of more than 64 members")
        names = members.map { Array($0.name.utf8) }
        self.members = members.map(\.member)
    }

    /// The position of the member named `key`: the one at `next` first, then any other; `next`
    /// moves past the one found.
    @inlinable
    public func find(_ key: JSONKey, from next: inout Int) -> Int? {
        if next < names.count, matches(next, key) {
            next += 1
            return next - 1
        }
        for candidate in names.indices where matches(candidate, key) {
            next = candidate + 1
            return candidate
        }
        return nil
    }

    @inlinable
    func matches(_ candidate: Int, _ key: JSONKey) -> Bool {
        names[candidate].withUnsafeBytes { name in
            name.count == key.bytes.count
                && (name.count == 0 || memcmp(name.baseAddress!, key.bytes.baseAddress!, name.count) == 0)
        }
    }
}

extension JSONMembers: Sendable where Member: Sendable {}

extension JSONMembers where Member: CaseIterable {
    /// Every case, each named as it is spelled (as a synthesized `CodingKey` names it), in
    /// declaration order.
    public init() {
        self.init(Member.allCases.map { (String(describing: $0), $0) })
    }
}
