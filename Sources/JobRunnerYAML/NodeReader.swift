import Foundation
import JobRunnerCore

typealias Node = YAMLTree.Node

/// One entry of a YAML mapping whose key is a plain string.
struct Entry {
    let key: String
    let keyNode: Node
    let value: Node
    /// Brought in by a merge key (`<<: *common`): written once, at the anchor, for every map
    /// that merges it.
    var isMerged = false
}

/// Reads typed values out of the YAML nodes of one file, turning every mismatch into a
/// diagnostic at the node's line and column instead of stopping at the first.
struct NodeReader {
    let file: String
    /// The file's composed YAML.
    var tree: YAMLTree
    /// The problems found, at most ``DiagnosticList/perFile`` of them listed.
    private(set) var problems = DiagnosticList()

    init(file: String, tree: YAMLTree = YAMLTree()) {
        self.file = file
        self.tree = tree
    }

    var diagnostics: [Diagnostic] { problems.all }

    func location(_ node: Node) -> SourceLocation {
        let mark = tree.mark(node)
        return SourceLocation(file: file, line: mark.line, column: mark.column)
    }

    /// A node's line and column, in this reader's file.
    func mark(_ node: Node) -> Mark {
        let mark = tree.mark(node)
        return Mark(line: mark.line, column: mark.column)
    }

    mutating func error(_ node: Node, _ message: String) {
        problems.append(Diagnostic(.error, at: location(node), message))
    }

    mutating func warning(_ node: Node, _ message: String) {
        problems.append(Diagnostic(.warning, at: location(node), message))
    }

    mutating func add(_ diagnostic: Diagnostic) { problems.append(diagnostic) }

    /// Counts errors that are not listed, the first of them at `location`.
    mutating func count(errors: Int, at location: SourceLocation) {
        problems.count(errors: errors, warnings: 0, at: location)
    }

    /// Adds the problems another reader of this file found, after those found here.
    mutating func add(_ more: DiagnosticList) { problems.append(more) }

    // Plain scalars are typed here, by the YAML core schema plus the yes/no/on/off spellings
    // people still write; quoted ones are strings. Tags are not read (`!!str 1` is the number 1),
    // as when Yams composed the files with its basic resolver.

    /// A plain scalar's text; nil for anything else.
    func plainText(_ node: Node) -> String? {
        tree.isPlain(node) ? tree.text(node) : nil
    }

    func isNull(_ node: Node) -> Bool {
        tree.isPlainNull(node)
    }

    func plainBool(_ node: Node) -> Bool? {
        switch plainText(node) {
        case "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON": return true
        case "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF": return false
        default: return nil
        }
    }

    func plainInt(_ node: Node) -> Int? {
        guard let string = plainText(node) else { return nil }
        var text = Substring(string)
        let negative = text.first == "-"
        if text.first == "-" || text.first == "+" { text = text.dropFirst() }
        let magnitude: Int?
        if text.hasPrefix("0x") {
            magnitude = Int(text.dropFirst(2), radix: 16)
        } else if text.hasPrefix("0o") {
            magnitude = Int(text.dropFirst(2), radix: 8)
        } else if text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            magnitude = Int(text)
        } else {
            magnitude = nil
        }
        return magnitude.map { negative ? -$0 : $0 }
    }

    func plainDouble(_ node: Node) -> Double? {
        guard let text = plainText(node) else { return nil }
        guard text.contains(where: { $0.isNumber }),
            !text.contains(where: { $0.isLetter && $0 != "e" && $0 != "E" }),
            let value = Double(text), value.isFinite
        else { return nil }
        return value
    }

    private func describe(_ node: Node) -> String {
        switch tree.kind(node) {
        case .mapping: return "a map"
        case .sequence: return "a list"
        case .scalar:
            if isNull(node) { return "nothing (null)" }
            return VisibleText.quoted(tree.text(node) ?? "")
        }
    }

    /// The entries of a mapping, in order; reports non-string and duplicate keys. A merge key
    /// (`<<: *common`, `<<: [*a, *b]`) stands for the entries of the maps it names, in its place,
    /// less the keys the mapping sets itself (see ``mergedEntries(_:what:)``).
    mutating func entries(_ node: Node, what: @autoclosure () -> String) -> [Entry]? {
        guard tree.kind(node) == .mapping else {
            error(node, "\(what()) must be a map of keys to values, not \(describe(node))")
            return nil
        }
        let pairs = tree.pairs(node)
        var result: [Entry] = []
        result.reserveCapacity(pairs.count)
        // The composer refused keys of equal text and tag: keys that repeat a text here have a
        // tag of their own (`!!int 1` and `1`), so only maps with such a key look for them.
        var seen: [String: Node]? = tree.hasTaggedKey(node) ? [:] : nil
        var merged: (index: Int, entries: [Entry])?
        for (keyNode, value) in pairs {
            if isMergeKey(keyNode) {
                merged = (result.count, mergedEntries(value, what: what()))
                continue
            }
            guard let key = tree.text(keyNode) else {
                error(keyNode, "keys of \(what()) must be plain words, not \(describe(keyNode))")
                continue
            }
            if let first = seen?[key] {
                let place = location(first)
                error(
                    keyNode,
                    "duplicate key \(VisibleText.quoted(key)) in \(what()) (first at line \(place.line), column \(place.column))"
                )
                continue
            }
            seen?[key] = keyNode
            result.append(Entry(key: key, keyNode: keyNode, value: value))
        }
        if let merged {
            let own = Set(result.map(\.key))
            result.insert(contentsOf: merged.entries.filter { !own.contains($0.key) }, at: merged.index)
        }
        return result
    }

    /// Reports keys that are not in `Key`, with a suggestion; returns the known entries by key.
    mutating func known<Key: FileKey>(
        _ entries: [Entry], as _: Key.Type, in what: @autoclosure () -> String
    )
        -> Known<Key>
    {
        var table = Known<Key>()
        // A key already written is seldom a typo's meaning (`rn:` beside `on:` meant `run`): the
        // others are tried first, and a written one only when none of them is near (`job:`
        // beside `jobs:`). Worked out at the first unknown key, which most maps have none of.
        var unwritten: [String]?
        // `x-` keys are the user's own (SPEC 3.1): room for anchors, notes and tools' settings.
        for entry in entries where !entry.key.hasPrefix("x-") {
            if let key = Key.byName[entry.key] {
                table[key] = entry
            } else {
                // A merged key is reported once, at the anchor: not in the words of each map that
                // merges it.
                let place = entry.isMerged ? "a map merged with <<" : what()
                let written = Set(entries.map(\.key))
                let candidates = unwritten ?? Key.names.filter { !written.contains($0) }
                unwritten = candidates
                let hint =
                    Suggestion.closest(to: entry.key, in: candidates)
                    ?? Suggestion.closest(to: entry.key, in: Key.names)
                error(
                    entry.keyNode,
                    "unknown key \(VisibleText.quoted(entry.key)) in \(place)"
                        + (hint.map { "; did you mean \(VisibleText.quoted($0))?" } ?? ""))
            }
        }
        return table
    }

    mutating func string(_ node: Node, what: String) -> String? {
        guard let text = tree.text(node), !isNull(node) else {
            error(node, "\(what) must be a string, not \(describe(node))")
            return nil
        }
        return text
    }

    mutating func nonEmptyString(_ node: Node, what: String) -> String? {
        guard let text = string(node, what: what) else { return nil }
        // What trimmingCharacters(in: .whitespaces) leaves empty, without CharacterSet's cost;
        // a value that starts with a visible ASCII character (most do) is not.
        if let first = text.utf8.first, first > 0x20, first < 0x7F { return text }
        guard !text.allSatisfy({ $0.isWhitespace && !$0.isNewline }) else {
            error(node, "\(what) must not be empty")
            return nil
        }
        return text
    }

    mutating func bool(_ node: Node, what: String) -> Bool? {
        guard let value = plainBool(node) else {
            error(node, "\(what) must be true or false, not \(describe(node))")
            return nil
        }
        return value
    }

    mutating func int(_ node: Node, what: String, range: ClosedRange<Int>? = nil) -> Int? {
        guard let value = plainInt(node) else {
            error(node, "\(what) must be a whole number, not \(describe(node))")
            return nil
        }
        if let range, !range.contains(value) {
            error(node, "\(what) must be between \(range.lowerBound) and \(range.upperBound), not \(value)")
            return nil
        }
        return value
    }

    mutating func number(_ node: Node, what: String) -> Double? {
        guard let value = plainInt(node).map(Double.init) ?? plainDouble(node) else {
            error(node, "\(what) must be a number, not \(describe(node))")
            return nil
        }
        return value
    }

    mutating func duration(_ node: Node, what: String, allowZero: Bool = true) -> Duration? {
        guard let text = tree.text(node), !isNull(node) else {
            error(
                node, "\(what) must be a duration like 30s, 15m, 1h30m or 500ms, not \(describe(node))")
            return nil
        }
        guard let value = JobDuration.parse(text) else {
            error(
                node,
                "\(what): \(VisibleText.quoted(text)) is not a duration; write it like 30s, 15m, 1h30m, 500ms or 1d"
            )
            return nil
        }
        if !allowZero && value <= .zero {
            error(node, "\(what) must be longer than zero")
            return nil
        }
        return value
    }

    mutating func choice<Value: RawRepresentable & CaseIterable>(
        _ node: Node, what: String, as type: Value.Type
    ) -> Value? where Value.RawValue == String {
        guard let text = string(node, what: what) else { return nil }
        if let value = Value(rawValue: text) { return value }
        let names = Value.allCases.map(\.rawValue)
        error(
            node,
            "\(what) must be one of \(names.joined(separator: ", ")), not \(VisibleText.quoted(text))\(Suggestion.hint(for: text, in: names))"
        )
        return nil
    }

    /// A list of strings; a single string is taken as a list of one.
    mutating func stringList(_ node: Node, what: String) -> [(String, Node)]? {
        if !isNull(node), let text = tree.text(node) { return [(text, node)] }
        guard tree.kind(node) == .sequence else {
            error(node, "\(what) must be a list, like [a, b], not \(describe(node))")
            return nil
        }
        var result: [(String, Node)] = []
        for item in tree.items(node) {
            if let text = string(item, what: "each item of \(what)") { result.append((text, item)) }
        }
        return result
    }

    /// Any YAML value as JSON-shaped data (for `with:`).
    mutating func json(_ node: Node) -> JSONValue {
        switch tree.kind(node) {
        case .scalar:
            if isNull(node) { return .null }
            if let value = plainBool(node) { return .bool(value) }
            if let value = plainInt(node) { return .int(value) }
            if let value = plainDouble(node) { return .double(value) }
            return .string(tree.text(node) ?? "")
        case .sequence:
            return .array(tree.items(node).map { json($0) })
        case .mapping:
            var object: [String: JSONValue] = [:]
            for entry in entries(node, what: "this map") ?? [] { object[entry.key] = json(entry.value) }
            return .object(object)
        }
    }
}
