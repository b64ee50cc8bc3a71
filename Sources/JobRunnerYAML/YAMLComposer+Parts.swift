import Foundation
import JobRunnerCore

extension YAMLComposer {
    /// Files smaller than this are composed in one pass.
    static let partedSize = 512 << 10

    /// The tree of `text`, as ``compose(_:)`` gives it, a large file's `jobs:` map composed in
    /// parts at once.
    ///
    /// libyaml reads one file on one thread, so a large file is cut at the lines where its
    /// `jobs:` entries start (``PartedText``), each piece is composed on its own, and the trees
    /// are joined. A file the cut cannot be sure of, any piece with a problem, and keys that
    /// repeat across pieces all give the file to ``compose(_:)`` whole instead, so that
    /// whatever it reports (the first problem, at its place) is what is reported.
    static func composeConcurrently(_ text: String) async -> Result<
        (tree: YAMLTree, root: YAMLTree.Node?), Failure
    > {
        guard text.utf8.count >= partedSize, let parted = PartedText(text) else { return compose(text) }
        let pieces = [parted.head] + parted.jobs + (parted.tail.map { [$0] } ?? [])
        let trees = await withTaskGroup(of: (index: Int, tree: YAMLTree, root: YAMLTree.Node?)?.self) {
            group in
            for (index, piece) in pieces.enumerated() {
                group.addTask {
                    guard case .success(let composed) = compose(piece.text) else { return nil }
                    return (index, composed.tree, composed.root)
                }
            }
            var trees = [(tree: YAMLTree, root: YAMLTree.Node?)?](repeating: nil, count: pieces.count)
            for await composed in group {
                guard let composed else {
                    group.cancelAll()
                    return [(tree: YAMLTree, root: YAMLTree.Node?)?]()
                }
                trees[composed.index] = (composed.tree, composed.root)
            }
            return trees
        }
        let composed = trees.compactMap { $0 }
        guard composed.count == pieces.count,
            let joined = TreeJoiner.join(
                composed.enumerated().map { ($0.element.tree, $0.element.root, pieces[$0.offset].firstLine) },
                jobParts: parted.jobs.count)
        else { return compose(text) }
        return .success(joined)
    }
}

/// A job file cut into pieces that libyaml composes to what it makes of the whole: the head (up
/// to and with the `jobs:` line), the `jobs:` map in parts that each start at one of its keys,
/// and the tail (the top-level keys after it).
///
/// The cut is made only where it cannot change what the pieces mean: a top-level `jobs:` on a
/// line of its own, whose entries start at one indentation; cut before lines at exactly that
/// indentation that start like a job id (inside a block scalar or a plain scalar such a line
/// would end it; inside a quoted scalar or a flow collection the piece before would not
/// compose). Files with aliases or anchors, line breaks other than `\n`, a byte order mark,
/// directives or document markers are not cut.
struct PartedText {
    struct Piece {
        var text: String
        /// The piece's first line in the file, from 0.
        var firstLine: Int
    }

    var head: Piece
    var jobs: [Piece]
    var tail: Piece?

    /// How many parts the `jobs:` map is cut in, at most.
    static let maxParts = 8
    /// A part has at least this many bytes.
    static let minPartSize = 64 << 10

    init?(_ text: String) {
        var text = text
        guard let cut = text.withUTF8({ Self.cut($0) }) else { return nil }
        func piece(_ range: Range<Int>, line: Int) -> Piece {
            let utf8 = text.utf8
            let start = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
            let end = utf8.index(start, offsetBy: range.count)
            return Piece(text: String(text[start..<end]), firstLine: line)
        }
        head = piece(0..<cut.starts[0].offset, line: 0)
        jobs = cut.starts.indices.map { part in
            let end = part + 1 < cut.starts.count ? cut.starts[part + 1].offset : cut.end.offset
            return piece(cut.starts[part].offset..<end, line: cut.starts[part].line)
        }
        tail =
            cut.end.offset < text.utf8.count
            ? piece(cut.end.offset..<text.utf8.count, line: cut.end.line) : nil
    }

    private typealias Place = (offset: Int, line: Int)

    /// Where the parts of the `jobs:` map start, and where the map ends (the tail's start).
    private static func cut(_ bytes: UnsafeBufferPointer<UInt8>) -> (starts: [Place], end: Place)? {
        guard let base = bytes.baseAddress, !bytes.starts(with: [0xEF, 0xBB, 0xBF]), !hasUncuttableByte(bytes)
        else { return nil }
        enum Stage { case head, jobs, tail }
        var stage = Stage.head
        var sectionStart: Place?
        var sectionEnd: Place?
        var indent: Int?
        var keys: [Place] = []
        var offset = 0
        var line = 0
        while offset < bytes.count {
            var lineEnd = bytes.count
            if let found = memchr(base + offset, 0x0A, bytes.count - offset) {
                lineEnd = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
            }
            let first = bytes[offset]
            if first == UInt8(ascii: "%") || startsWith(bytes, at: offset, "---")
                || startsWith(bytes, at: offset, "...")
            {
                return nil
            }
            switch stage {
            case .head:
                if startsWith(bytes, at: offset, "jobs") {
                    guard isBareJobsKey(bytes[offset..<lineEnd]) else { return nil }
                    stage = .jobs
                    sectionStart = (lineEnd + 1, line + 1)
                }
            case .jobs:
                if first != UInt8(ascii: " ") && first != UInt8(ascii: "#") && first != UInt8(ascii: "\n") {
                    sectionEnd = (offset, line)
                    stage = .tail
                    break
                }
                var spaces = 0
                while offset + spaces < lineEnd, bytes[offset + spaces] == UInt8(ascii: " ") { spaces += 1 }
                guard offset + spaces < lineEnd else { break }
                let next = bytes[offset + spaces]
                if next == UInt8(ascii: "#") { break }
                guard let indent else {
                    guard spaces > 0, startsAnID(next) else { return nil }
                    indent = spaces
                    keys.append((offset, line))
                    break
                }
                if spaces == indent && startsAnID(next) {
                    keys.append((offset, line))
                } else if spaces < indent {
                    return nil
                }
            case .tail:
                break
            }
            offset = lineEnd + 1
            line += 1
        }
        guard let sectionStart, !keys.isEmpty else { return nil }
        let end = sectionEnd ?? (bytes.count, line)
        let size = end.offset - sectionStart.offset
        let parts = min(maxParts, size / minPartSize)
        guard parts > 1 else { return nil }
        // The first part starts where the section does (blank lines and comments included); the
        // others at the first key at or after an even share of the section.
        var starts: [Place] = [sectionStart]
        var key = 0
        for part in 1..<parts {
            let target = sectionStart.offset + size * part / parts
            while key < keys.count, keys[key].offset < target { key += 1 }
            guard key < keys.count else { break }
            if keys[key].offset > starts[starts.count - 1].offset { starts.append(keys[key]) }
        }
        guard starts.count > 1 else { return nil }
        return (starts, end)
    }

    /// Bytes that make a cut unsure: `&` and `*` (anchors and aliases reach across pieces),
    /// `\r` and the other line breaks libyaml counts (NEL, LS, PS), which would shift the
    /// pieces' lines.
    private static func hasUncuttableByte(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "&"), UInt8(ascii: "*"), UInt8(ascii: "\r"):
                return true
            case 0xC2 where index + 1 < bytes.count && bytes[index + 1] == 0x85:
                return true
            case 0xE2
            where index + 2 < bytes.count && bytes[index + 1] == 0x80
                && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9):
                return true
            default:
                break
            }
            index += 1
        }
        return false
    }

    /// `jobs:` alone on its line, perhaps with spaces and a comment after it.
    private static func isBareJobsKey(_ line: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        var rest = line.dropFirst(4)
        guard rest.first == UInt8(ascii: ":") else { return false }
        rest = rest.dropFirst()
        guard let next = rest.first(where: { $0 != UInt8(ascii: " ") }) else { return true }
        // `jobs: # …` only: a comment needs a space before it.
        return next == UInt8(ascii: "#") && rest.first == UInt8(ascii: " ")
    }

    private static func startsAnID(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "_")
    }

    private static func startsWith(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, _ word: StaticString)
        -> Bool
    {
        guard offset + word.utf8CodeUnitCount <= bytes.count else { return false }
        return (0..<word.utf8CodeUnitCount).allSatisfy { bytes[offset + $0] == word.utf8Start[$0] }
    }
}

/// Joins the trees of a ``PartedText``'s pieces into the tree of the whole file.
enum TreeJoiner {
    /// Pieces deeper than this are left to be composed whole: the whole file nests one level
    /// deeper than a part, and only the whole can say whether that is too deep.
    static let maxPartDepth = 100

    /// The joined tree and its root; nil when the pieces do not make a job file's tree the way
    /// ``PartedText`` expects, or keys repeat across them.
    /// - Parameters:
    ///   - pieces: the head, the `jobs:` parts, and perhaps the tail, each with its first line.
    ///   - jobParts: how many of the pieces are parts of the `jobs:` map.
    static func join(_ pieces: [(tree: YAMLTree, root: YAMLTree.Node?, firstLine: Int)], jobParts: Int)
        -> (tree: YAMLTree, root: YAMLTree.Node?)?
    {
        guard jobParts >= 1, pieces.count >= 1 + jobParts,
            pieces.allSatisfy({ $0.tree.depth <= maxPartDepth })
        else {
            return nil
        }
        let hasTail = pieces.count > 1 + jobParts
        // The head is a map whose last key is `jobs`, with nothing after it.
        guard let headRoot = pieces[0].root, pieces[0].tree.kind(headRoot) == .mapping,
            let last = pieces[0].tree.pairs(headRoot).last,
            pieces[0].tree.isPlain(last.key, "jobs"), pieces[0].tree.isPlain(last.value, "")
        else { return nil }
        for piece in pieces[1...jobParts] {
            guard let root = piece.root, piece.tree.kind(root) == .mapping else { return nil }
        }
        if hasTail, let root = pieces[pieces.count - 1].root,
            pieces[pieces.count - 1].tree.kind(root) != .mapping
        {
            return nil
        }

        guard pieces.allSatisfy({ $0.tree.tags.count < Int(UInt16.max) - 2 }) else { return nil }
        var tree = YAMLTree()
        tree.records.reserveCapacity(pieces.reduce(2) { $0 + $1.tree.records.count })
        tree.bytes.reserveCapacity(pieces.reduce(0) { $0 + $1.tree.bytes.count })
        let mapChildren = pieces.reduce(0) { total, piece in
            total + (piece.root.map { Int(piece.tree.records[$0.index].count) } ?? 0)
        }
        tree.children.reserveCapacity(pieces.reduce(mapChildren) { $0 + $1.tree.children.count })
        var tagNumbers: [String: UInt16] = [:]
        // Where each piece's records start in the joined tree.
        var bases: [UInt32] = []
        for piece in pieces {
            let recordBase = UInt32(tree.records.count)
            let childBase = UInt32(tree.children.count)
            let byteBase = UInt32(tree.bytes.count)
            let lineBase = UInt32(piece.firstLine)
            let tags = piece.tree.tags.map { name in
                if let number = tagNumbers[name] { return number }
                tree.tags.append(name)
                let number = UInt16(tree.tags.count)
                tagNumbers[name] = number
                return number
            }
            for var record in piece.tree.records {
                record.line += lineBase
                record.start += record.kind == .scalar ? byteBase : childBase
                if record.tag != 0 { record.tag = tags[Int(record.tag) - 1] }
                tree.records.append(record)
            }
            tree.children.append(contentsOf: piece.tree.children.lazy.map { $0 + recordBase })
            tree.bytes.append(contentsOf: piece.tree.bytes)
            tree.depth = max(tree.depth, piece.tree.depth)
            bases.append(recordBase)
        }
        /// The children of piece `index`'s root, as nodes of the joined tree.
        func rootChildren(_ index: Int) -> LazyMapSequence<ArraySlice<UInt32>, UInt32> {
            let piece = pieces[index]
            let record = piece.root.map { piece.tree.records[$0.index] }
            let range = record.map { Int($0.start)..<Int($0.start + $0.count) } ?? 0..<0
            return piece.tree.children[range].lazy.map { $0 + bases[index] }
        }
        // The `jobs:` map: the keys and values of every part, in order.
        guard let firstPart = pieces[1].root else { return nil }
        let jobs = tree.records.count
        var jobsRecord = tree.records[firstPart.index + Int(bases[1])]
        jobsRecord.start = UInt32(tree.children.count)
        for part in 1...jobParts { tree.children.append(contentsOf: rootChildren(part)) }
        jobsRecord.count = UInt32(tree.children.count) - jobsRecord.start
        tree.records.append(jobsRecord)
        // The top-level map: the head's keys, `jobs` with that map, and the tail's keys.
        var rootRecord = tree.records[headRoot.index + Int(bases[0])]
        rootRecord.start = UInt32(tree.children.count)
        tree.children.append(contentsOf: rootChildren(0).dropLast())
        tree.children.append(UInt32(jobs))
        if hasTail { tree.children.append(contentsOf: rootChildren(pieces.count - 1)) }
        rootRecord.count = UInt32(tree.children.count) - rootRecord.start
        let root = tree.records.count
        tree.records.append(rootRecord)
        tree.depth += 1
        // What each piece could not see: keys repeated across pieces (the whole reports them).
        for record in [jobsRecord, rootRecord]
        where !tree.duplicateKeys(
            tree.children[Int(record.start)..<Int(record.start + record.count)], keeping: 1
        ).kept.isEmpty {
            return nil
        }
        return (tree, YAMLTree.Node(index: root))
    }
}
