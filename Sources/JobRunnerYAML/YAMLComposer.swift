// libyaml, as Yams ships it: its events are composed here straight into a compact tree.
import CYaml
import Foundation
import JobRunnerCore

/// Composes a job file's text into a ``YAMLTree`` from libyaml's events, in one pass: aliases
/// resolved (with the ``AliasBudget``), duplicate keys found as each map closes, and every
/// problem turned into the message and place a diagnostic shows.
///
/// It keeps what the loader did when Yams composed the files: one document per file, the first
/// problem only (a file that does not parse has nothing else worth reporting) besides every
/// repeated key found before it, duplicate keys compared by text and tag, and, in a file with
/// aliases, a budget problem anywhere before the first syntax error reported ahead of any other.
struct YAMLComposer {
    /// Why a file could not be composed: the message, and where (from 1).
    struct Failure: Error, Equatable {
        var message: String
        var line: Int
        var column: Int
        /// Another place in the file the message names (the other of two duplicate keys):
        /// written after `message` as `FILE:LINE:COLUMN`, followed by its `ending`.
        var other: OtherPlace?
        /// The problems found beside this one (every repeated key), each reported on its own.
        var more: [Failure] = []
        /// Repeated keys found beside this one beyond ``YAMLComposer/keptDuplicates``: only
        /// counted, like the problems of a file beyond those listed.
        var counted: Counted?

        struct Counted: Equatable {
            var errors: Int
            /// The first place among them.
            var line: Int
            var column: Int

            func adding(_ other: Counted) -> Counted {
                let first = (line, column) <= (other.line, other.column) ? self : other
                return Counted(errors: errors + other.errors, line: first.line, column: first.column)
            }
        }

        struct OtherPlace: Equatable {
            var line: Int
            var column: Int
            var ending: String
        }

        /// The message as a diagnostic in `file` shows it.
        func message(in file: String) -> String {
            guard let other else { return message }
            return message + "\(file):\(other.line):\(other.column)" + other.ending
        }

        /// This problem and those found beside it.
        var all: [Failure] { [self] + more }
    }

    /// The tree of `text`, with its root (nil for a file with no document), or the first problem.
    static func compose(_ text: String) -> Result<(tree: YAMLTree, root: YAMLTree.Node?), Failure> {
        guard !text.isEmpty else { return .success((YAMLTree(), nil)) }
        var composer = YAMLComposer(text: text)
        var bytes = text
        return bytes.withUTF8 { composer.run($0) }
    }

    private let text: String
    /// Without a `*` there is no alias, and nothing to count: most files skip the budget.
    private let countsAliases: Bool
    /// libyaml is told the text is UTF-8, and so counts a byte order mark as a column of line 1.
    private let startsWithBOM: Bool
    private var tree = YAMLTree()
    private var budget = AliasBudget()
    private var anchors: [String: UInt32] = [:]
    private var tagIndex: [String: UInt16] = [:]
    /// The lists and maps open at this point: their records, where their children start in
    /// `pending`, and their anchors.
    private var open: [(record: Int, firstChild: Int, anchor: String?)] = []
    private var pendingChildren: [UInt32] = []
    private var root: UInt32?
    private var documents = 0
    /// A problem found while the budget still counts the rest of the file (see the type's note).
    private var problem: Failure?
    /// Every repeated key found so far (the file is composed on, to find them all): the first
    /// ``keptDuplicates`` problems with their messages, the rest counted.
    private var duplicates: [Failure] = []
    private var countedDuplicates: Failure.Counted?
    /// Far more than a file's listed problems (``DiagnosticList/perFile``), few enough that a
    /// file of repeats costs no more memory than its text.
    static let keptDuplicates = 1_000

    private init(text: String) {
        self.text = text
        var bytes = text
        countsAliases = bytes.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, Int32(UInt8(ascii: "*")), bytes.count) != nil
        }
        startsWithBOM = text.utf8.starts(with: [0xEF, 0xBB, 0xBF])
        // Room for a node every few bytes, so that a large file's arrays are not copied as they
        // grow (a copy holds both at once); what is never written is never touched, so costs no
        // memory.
        let size = text.utf8.count
        tree.records.reserveCapacity(size / 4)
        tree.children.reserveCapacity(size / 4)
        tree.bytes.reserveCapacity(size / 2)
    }

    private mutating func run(_ input: UnsafeBufferPointer<UInt8>) -> Result<
        (tree: YAMLTree, root: YAMLTree.Node?), Failure
    > {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            return .failure(Failure(message: "invalid YAML: Memory error", line: 1, column: 1))
        }
        defer { yaml_parser_delete(&parser) }
        yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
        yaml_parser_set_input_string(&parser, input.baseAddress, input.count)
        while true {
            var event = yaml_event_t()
            guard yaml_parser_parse(&parser, &event) == 1 else {
                return .failure(withDuplicates(problem ?? failure(of: parser)))
            }
            defer { yaml_event_delete(&event) }
            do {
                if try take(&event) {
                    if let problem { return .failure(withDuplicates(problem)) }
                    if var first = duplicates.first {
                        first.more = Array(duplicates.dropFirst())
                        first.counted = countedDuplicates
                        return .failure(first)
                    }
                    return .success((tree, root.map { YAMLTree.Node(index: Int($0)) }))
                }
            } catch {
                return .failure(withDuplicates(error))
            }
            // Without aliases nothing can come before a problem already found.
            if problem != nil && !countsAliases {
                return .failure(withDuplicates(problem ?? failure(of: parser)))
            }
        }
    }

    /// `failure`, with the repeated keys found before it.
    private func withDuplicates(_ failure: Failure) -> Failure {
        var failure = failure
        failure.more += duplicates
        failure.counted = countedDuplicates
        return failure
    }

    /// Adds one event to the tree; true at the end of the stream.
    private mutating func take(_ event: inout yaml_event_t) throws(Failure) -> Bool {
        let line = Int(event.start_mark.line)
        let column = Int(event.start_mark.column)
        switch event.type {
        case YAML_STREAM_END_EVENT:
            return true
        case YAML_DOCUMENT_START_EVENT:
            documents += 1
            if documents > 1 {
                found(
                    "invalid YAML: a second document starts here; a job file holds one document: remove the '---' or split the file in two",
                    line: line, column: column)
            }
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            let anchor = Self.name(scalar.anchor)
            if countsAliases { budget.scalar(anchor: anchor, bytes: Int(scalar.length)) }
            guard problem == nil else { return false }
            let tag = scalar.quoted_implicit == 1 ? 0 : tagNumber(scalar.tag, own: "tag:yaml.org,2002:str")
            let start = UInt32(tree.bytes.count)
            if let value = scalar.value {
                tree.bytes.append(contentsOf: UnsafeBufferPointer(start: value, count: scalar.length))
            }
            add(
                YAMLTree.Record(
                    kind: .scalar, plain: scalar.style == YAML_PLAIN_SCALAR_STYLE, tag: tag,
                    line: UInt32(line),
                    column: UInt32(column), start: start, count: UInt32(scalar.length)), anchor: anchor)
        case YAML_ALIAS_EVENT:
            let anchor = Self.name(event.data.alias.anchor) ?? ""
            if countsAliases {
                do { try budget.alias(anchor, line: line, column: column) } catch {
                    throw budgetFailure(error)
                }
            }
            guard problem == nil else { return false }
            guard let target = anchors[anchor] else {
                let name = VisibleText.escaped(anchor)
                found(
                    "invalid YAML: the alias *\(name) names no anchor; define the anchor &\(name) before this alias (above it in the file)",
                    line: line, column: column)
                return false
            }
            attach(target)
        case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
            let isMapping = event.type == YAML_MAPPING_START_EVENT
            // The two start events' data have the same layout.
            let start = event.data.sequence_start
            let anchor = Self.name(start.anchor)
            if countsAliases {
                do { try budget.start(anchor: anchor, line: line, column: column) } catch {
                    throw budgetFailure(error)
                }
            }
            guard problem == nil else { return false }
            let tag =
                start.implicit != 0
                ? 0 : tagNumber(start.tag, own: isMapping ? "tag:yaml.org,2002:map" : "tag:yaml.org,2002:seq")
            open.append((tree.records.count, pendingChildren.count, anchor))
            tree.depth = max(tree.depth, open.count)
            tree.records.append(
                YAMLTree.Record(
                    kind: isMapping ? .mapping : .sequence, plain: false, tag: tag, line: UInt32(line),
                    column: UInt32(column), start: 0, count: 0))
        case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
            if countsAliases { budget.end() }
            guard problem == nil, let collection = open.popLast() else { return false }
            let count = pendingChildren.count - collection.firstChild
            if event.type == YAML_MAPPING_END_EVENT {
                // The map is kept as it is (the file fails anyway), so that later repeats are found.
                let found = tree.duplicateKeys(
                    pendingChildren[collection.firstChild...], keeping: Self.keptDuplicates - duplicates.count
                )
                duplicates += found.kept
                if let more = found.counted {
                    countedDuplicates = countedDuplicates.map { $0.adding(more) } ?? more
                }
            }
            tree.records[collection.record].start = UInt32(tree.children.count)
            tree.records[collection.record].count = UInt32(count)
            tree.children.append(contentsOf: pendingChildren[collection.firstChild...])
            pendingChildren.removeLast(count)
            if let anchor = collection.anchor { anchors[anchor] = UInt32(collection.record) }
            attach(UInt32(collection.record))
        default:
            break
        }
        return false
    }

    private mutating func add(_ record: YAMLTree.Record, anchor: String?) {
        let index = UInt32(tree.records.count)
        tree.records.append(record)
        if let anchor { anchors[anchor] = index }
        attach(index)
    }

    /// Makes a node the next child of the innermost open list or map, or the document's root.
    private mutating func attach(_ node: UInt32) {
        if open.isEmpty { root = node } else { pendingChildren.append(node) }
    }

    private mutating func found(_ message: String, line: Int, column: Int) {
        if problem == nil { problem = Failure(message: message, line: line + 1, column: column + 1) }
    }

    /// 0 for a kind's own tag (also `!` and no tag at all), else the tag's number.
    private mutating func tagNumber(_ pointer: UnsafeMutablePointer<yaml_char_t>?, own: String) -> UInt16 {
        guard let name = Self.name(pointer), name != "!", name != own else { return 0 }
        if let number = tagIndex[name] { return number }
        // More distinct tags than this in one file share the last number: no job file has any.
        guard tree.tags.count < Int(UInt16.max) - 1 else { return UInt16.max }
        tree.tags.append(name)
        let number = UInt16(tree.tags.count)
        tagIndex[name] = number
        return number
    }

    private func budgetFailure(_ exceeded: AliasBudget.Exceeded) -> Failure {
        let column = startsWithBOM && exceeded.line == 0 ? max(0, exceeded.column - 1) : exceeded.column
        return Failure(message: exceeded.message, line: exceeded.line + 1, column: column + 1)
    }

    private static func name(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        guard let pointer else { return nil }
        return String.decodeCString(pointer, as: UTF8.self, repairingInvalidCodeUnits: true)?.result
    }
}

extension YAMLComposer {
    /// libyaml's error, in the words and at the place a diagnostic gives.
    private func failure(of parser: yaml_parser_t) -> Failure {
        let problem = parser.problem.map { String(cString: $0) } ?? "unknown problem"
        switch parser.error {
        case YAML_READER_ERROR:
            // libyaml names the byte offset of a character YAML does not allow (NUL, ESC, ...);
            // the place is found again here, where the whole text is at hand.
            if let found = TextCheck.firstForbiddenCharacter(in: text) {
                return Failure(
                    message:
                        "the control character \(VisibleText.escaped(String(found.scalar))) is not allowed in a job file; remove it (write it as an escape in a double-quoted string if a value needs it)",
                    line: found.line, column: found.column)
            }
            let offset = text.utf8.index(
                text.utf8.startIndex, offsetBy: parser.problem_offset, limitedBy: text.utf8.endIndex)?
                .samePosition(in: text).map { text.distance(from: text.startIndex, to: $0) }
            let place = offset.map { TextCheck.location(ofCharacter: $0, in: text) } ?? (line: 1, column: 1)
            return Failure(message: "invalid YAML: \(problem)", line: place.line, column: place.column)
        case YAML_SCANNER_ERROR, YAML_PARSER_ERROR, YAML_COMPOSER_ERROR:
            let line = Int(parser.problem_mark.line) + 1
            let column = Int(parser.problem_mark.column) + 1
            if problem.hasPrefix("Maximum nesting level reached") {
                return Failure(
                    message:
                        "values are nested more than \(AliasBudget.maxDepth) levels deep; flatten this file",
                    line: line, column: column)
            }
            let context = parser.context.map { String(cString: $0) }
            if context == "while scanning a quoted scalar", problem == "found unexpected end of stream" {
                // The end of the file is no place to look for it: where the string starts is.
                return Failure(
                    message:
                        "invalid YAML: a quoted string starting here is never closed; end it with the quote it starts with",
                    line: Int(parser.context_mark.line) + 1, column: Int(parser.context_mark.column) + 1)
            }
            if problem.hasPrefix("found a tab character") || character(atLine: line, column: column) == "\t" {
                return Failure(
                    message:
                        "invalid YAML: a tab indents this line; YAML is indented with spaces only: replace the tab with spaces",
                    line: line, column: column)
            }
            return Failure(
                message: "invalid YAML: \(problem)\(context.map { " " + $0 } ?? "")", line: line,
                column: column)
        default:
            return Failure(message: "invalid YAML: Memory error", line: 1, column: 1)
        }
    }

    /// The character at a place libyaml names (line and column from 1, the column counted in
    /// characters as libyaml counts them); nil past the text.
    private func character(atLine line: Int, column: Int) -> Unicode.Scalar? {
        var scalars = text.unicodeScalars[...]
        for _ in 1..<max(line, 1) {
            guard let newline = scalars.firstIndex(of: "\n") else { return nil }
            scalars = scalars[scalars.index(after: newline)...]
        }
        let skipped = scalars.dropFirst(max(column - 1, 0))
        return skipped.first
    }
}
