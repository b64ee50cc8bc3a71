/// One job file's YAML, composed: every node in one flat array, the children of every list and
/// map in another, and the text of every scalar in a third.
///
/// A 100,000-job file is about a million nodes; as separate values (strings, arrays and tags for
/// each) they cost several times the file's memory and most of its load time. Here a node is 20
/// bytes, a child 4, and an alias costs nothing: it is the index of the node its anchor names.
struct YAMLTree {
    /// What a node is.
    enum Kind: UInt8 {
        case scalar, sequence, mapping
    }

    /// A node: its index in the tree that holds it.
    struct Node: Hashable {
        let index: Int
    }

    struct Record {
        var kind: Kind
        /// For scalars: written without quotes or block indicators, so typed by its text.
        var plain: Bool
        /// 0 for the kind's own tag (`!!str`, `!!seq`, `!!map`, also when implicit), else the
        /// position in ``YAMLTree/tags`` plus one. Only keys compare tags.
        var tag: UInt16
        /// 0-based, as libyaml counts them (columns in characters).
        var line: UInt32
        var column: UInt32
        /// Scalars: the text's offset in ``YAMLTree/bytes``; lists and maps: the first child's
        /// offset in ``YAMLTree/children``.
        var start: UInt32
        /// Scalars: the text's length in bytes; lists: their items; maps: twice their pairs.
        var count: UInt32
    }

    var records: [Record] = []
    /// Children of lists (items) and maps (key, value, key, value, …), each list's contiguous.
    var children: [UInt32] = []
    /// The text of every scalar, one after another.
    var bytes: [UInt8] = []
    /// Tags other than the kinds' own, as libyaml resolves them (`tag:yaml.org,2002:int`).
    var tags: [String] = []
    /// How deep lists and maps nest: 1 for a file of one map of scalars.
    var depth = 0

    func kind(_ node: Node) -> Kind { records[node.index].kind }

    /// Line and column, from 1.
    func mark(_ node: Node) -> (line: Int, column: Int) {
        let record = records[node.index]
        return (Int(record.line) + 1, Int(record.column) + 1)
    }

    /// A scalar's text; nil for lists and maps.
    func text(_ node: Node) -> String? {
        let record = records[node.index]
        guard record.kind == .scalar else { return nil }
        let start = Int(record.start)
        return bytes.withUnsafeBufferPointer {
            String(
                decoding: UnsafeBufferPointer(rebasing: $0[start..<start + Int(record.count)]), as: UTF8.self)
        }
    }

    /// Whether a node is a plain scalar (not quoted, not a block scalar).
    func isPlain(_ node: Node) -> Bool {
        let record = records[node.index]
        return record.kind == .scalar && record.plain
    }

    /// Whether a node is a plain scalar whose text is exactly `literal` (ASCII).
    func isPlain(_ node: Node, _ literal: StaticString) -> Bool {
        let record = records[node.index]
        guard record.kind == .scalar, record.plain, Int(record.count) == literal.utf8CodeUnitCount else {
            return false
        }
        let start = Int(record.start)
        return bytes.withUnsafeBufferPointer { buffer in
            (0..<Int(record.count)).allSatisfy { buffer[start + $0] == literal.utf8Start[$0] }
        }
    }

    /// Whether a node is a plain scalar that YAML reads as null: empty, `~`, `null`, `Null` or
    /// `NULL`; by its bytes, as most values are asked this once or twice.
    func isPlainNull(_ node: Node) -> Bool {
        let record = records[node.index]
        guard record.kind == .scalar, record.plain else { return false }
        let start = Int(record.start)
        switch record.count {
        case 0: return true
        case 1: return bytes[start] == UInt8(ascii: "~")
        case 4:
            let (n, u, l, m) = (bytes[start], bytes[start + 1], bytes[start + 2], bytes[start + 3])
            if n == UInt8(ascii: "n") || n == UInt8(ascii: "N"),
                u == UInt8(ascii: "u") || u == UInt8(ascii: "U")
            {
                let upper = u == UInt8(ascii: "U")
                // null, Null, NULL: the rest of the word in the case of its second letter.
                if upper {
                    return n == UInt8(ascii: "N") && l == UInt8(ascii: "L") && m == UInt8(ascii: "L")
                }
                return l == UInt8(ascii: "l") && m == UInt8(ascii: "l")
            }
            return false
        default: return false
        }
    }

    /// Whether any key of a map has a tag other than its kind's own (`!!int 1: …`).
    func hasTaggedKey(_ node: Node) -> Bool {
        pairs(node).contains { records[$0.key.index].tag != 0 }
    }

    /// A list's items; empty for scalars and maps.
    func items(_ node: Node) -> Children {
        let record = records[node.index]
        guard record.kind == .sequence else { return Children(slice: children[0..<0]) }
        return Children(slice: children[Int(record.start)..<Int(record.start + record.count)])
    }

    /// A map's keys and values, in order; empty for scalars and lists.
    func pairs(_ node: Node) -> Pairs {
        let record = records[node.index]
        guard record.kind == .mapping else { return Pairs(slice: children[0..<0]) }
        return Pairs(slice: children[Int(record.start)..<Int(record.start + record.count)])
    }

    /// The nodes of a list.
    struct Children: RandomAccessCollection {
        let slice: ArraySlice<UInt32>
        var startIndex: Int { 0 }
        var endIndex: Int { slice.count }
        subscript(position: Int) -> Node { Node(index: Int(slice[slice.startIndex + position])) }
    }

    /// The pairs of a map.
    struct Pairs: RandomAccessCollection {
        let slice: ArraySlice<UInt32>
        var startIndex: Int { 0 }
        var endIndex: Int { slice.count / 2 }
        subscript(position: Int) -> (key: Node, value: Node) {
            let base = slice.startIndex + 2 * position
            return (Node(index: Int(slice[base])), Node(index: Int(slice[base + 1])))
        }
    }
}

extension YAMLTree {
    /// Whether two nodes are the same key as YAML compares them: same kind, same tag, same
    /// text, or the same items and pairs in the same order.
    func sameKey(_ a: Node, _ b: Node) -> Bool {
        if a == b { return true }
        let left = records[a.index]
        let right = records[b.index]
        guard left.kind == right.kind, left.tag == right.tag else { return false }
        switch left.kind {
        case .scalar:
            let leftBytes = bytes[Int(left.start)..<Int(left.start + left.count)]
            let rightBytes = bytes[Int(right.start)..<Int(right.start + right.count)]
            if leftBytes.elementsEqual(rightBytes) { return true }
            // Swift compares strings by canonical equivalence ("é" written as one character or
            // as e and an accent), as Yams did: only ASCII texts differ by their bytes alone.
            if leftBytes.allSatisfy({ $0 < 0x80 }) && rightBytes.allSatisfy({ $0 < 0x80 }) { return false }
            return text(a) == text(b)
        case .sequence, .mapping:
            guard left.count == right.count else { return false }
            for offset in 0..<Int(left.count)
            where !sameKey(
                Node(index: Int(children[Int(left.start) + offset])),
                Node(index: Int(children[Int(right.start) + offset])))
            {
                return false
            }
            return true
        }
    }

    /// A hash that equal keys (``sameKey(_:_:)``) share.
    func hashKey(_ node: Node, into hasher: inout Hasher) {
        let record = records[node.index]
        hasher.combine(record.kind)
        hasher.combine(record.tag)
        switch record.kind {
        case .scalar:
            // As a string: equal strings hash alike whatever their bytes (see sameKey).
            hasher.combine(text(node))
        case .sequence, .mapping:
            hasher.combine(record.count)
            for offset in 0..<Int(record.count) {
                hashKey(Node(index: Int(children[Int(record.start) + offset])), into: &hasher)
            }
        }
    }
}
