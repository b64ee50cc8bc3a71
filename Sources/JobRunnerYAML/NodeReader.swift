import Foundation
import JobRunnerCore
import Yams

/// One entry of a YAML mapping whose key is a plain string.
struct Entry {
    let key: String
    let keyNode: Node
    let value: Node
}

/// Reads typed values out of YAML nodes of one file, turning every mismatch into a
/// diagnostic at the node's line and column instead of stopping at the first.
struct NodeReader {
    let file: String
    /// The problems found, at most ``DiagnosticList/perFile`` of them listed.
    private(set) var problems = DiagnosticList()

    init(file: String) { self.file = file }

    var diagnostics: [Diagnostic] { problems.all }

    func location(_ node: Node) -> SourceLocation {
        let mark = node.mark
        return SourceLocation(file: file, line: mark?.line ?? 1, column: mark?.column ?? 1)
    }

    mutating func error(_ node: Node, _ message: String) {
        problems.append(Diagnostic(.error, at: location(node), message))
    }

    mutating func warning(_ node: Node, _ message: String) {
        problems.append(Diagnostic(.warning, at: location(node), message))
    }

    mutating func add(_ diagnostic: Diagnostic) { problems.append(diagnostic) }

    // Files are composed with Yams' basic resolver (no regular expression per scalar, which
    // cost most of the load time of large files); plain scalars are typed here instead, by the
    // YAML core schema plus the yes/no/on/off spellings people still write.

    static func isNull(_ node: Node) -> Bool {
        guard case .scalar(let scalar) = node else { return false }
        return scalar.style == .plain && ["", "~", "null", "Null", "NULL"].contains(scalar.string)
    }

    static func plainBool(_ node: Node) -> Bool? {
        guard case .scalar(let scalar) = node, scalar.style == .plain else { return nil }
        switch scalar.string {
        case "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON": return true
        case "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF": return false
        default: return nil
        }
    }

    static func plainInt(_ node: Node) -> Int? {
        guard case .scalar(let scalar) = node, scalar.style == .plain else { return nil }
        var text = Substring(scalar.string)
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

    static func plainDouble(_ node: Node) -> Double? {
        guard case .scalar(let scalar) = node, scalar.style == .plain else { return nil }
        let text = scalar.string
        guard text.contains(where: { $0.isNumber }),
            !text.contains(where: { $0.isLetter && $0 != "e" && $0 != "E" }),
            let value = Double(text), value.isFinite
        else { return nil }
        return value
    }

    private static func describe(_ node: Node) -> String {
        switch node {
        case .mapping: return "a map"
        case .sequence: return "a list"
        case .alias: return "an alias"
        case .scalar:
            if isNull(node) { return "nothing (null)" }
            return "'\(Self.shortened(node.scalar?.string ?? ""))'"
        }
    }

    /// A value as quoted in a message: its first 60 characters, so that one huge value does not
    /// make a huge message.
    static func shortened(_ text: String) -> String {
        guard text.utf8.count > 60 else { return text }
        let prefix = text.prefix(60)
        return prefix.count < text.count ? prefix + "…" : text
    }

    /// The entries of a mapping, in order; reports non-string and duplicate keys. A merge key
    /// (`<<: *common`, `<<: [*a, *b]`) stands for the entries of the maps it names, in its place,
    /// less the keys the mapping sets itself (see ``mergedEntries(_:what:)``).
    mutating func entries(_ node: Node, what: String) -> [Entry]? {
        guard case .mapping(let mapping) = node else {
            error(node, "\(what) must be a map of keys to values, not \(Self.describe(node))")
            return nil
        }
        var result: [Entry] = []
        var seen: [String: Node] = [:]
        var merged: (index: Int, entries: [Entry])?
        for (keyNode, value) in mapping {
            if Self.isMergeKey(keyNode) {
                merged = (result.count, mergedEntries(value, what: what))
                continue
            }
            guard case .scalar(let scalar) = keyNode else {
                error(keyNode, "keys of \(what) must be plain words, not \(Self.describe(keyNode))")
                continue
            }
            let key = scalar.string
            if let first = seen[key] {
                let place = location(first)
                error(
                    keyNode,
                    "duplicate key '\(key)' in \(what) (first at line \(place.line), column \(place.column))")
                continue
            }
            seen[key] = keyNode
            result.append(Entry(key: key, keyNode: keyNode, value: value))
        }
        if let merged {
            result.insert(contentsOf: merged.entries.filter { seen[$0.key] == nil }, at: merged.index)
        }
        return result
    }

    /// Reports keys that are not in `allowed`, with a suggestion; returns the known entries by key.
    mutating func known(_ entries: [Entry], allowed: [String], in what: String) -> [String: Entry] {
        var table: [String: Entry] = [:]
        // `x-` keys are the user's own (SPEC 3.1): room for anchors, notes and tools' settings.
        for entry in entries where !entry.key.hasPrefix("x-") {
            if allowed.contains(entry.key) {
                table[entry.key] = entry
            } else {
                error(
                    entry.keyNode,
                    "unknown key '\(entry.key)' in \(what)\(Suggestion.hint(for: entry.key, in: allowed))")
            }
        }
        return table
    }

    mutating func string(_ node: Node, what: String) -> String? {
        guard case .scalar(let scalar) = node, !Self.isNull(node) else {
            error(node, "\(what) must be a string, not \(Self.describe(node))")
            return nil
        }
        return scalar.string
    }

    mutating func nonEmptyString(_ node: Node, what: String) -> String? {
        guard let text = string(node, what: what) else { return nil }
        // What trimmingCharacters(in: .whitespaces) leaves empty, without CharacterSet's cost.
        guard !text.allSatisfy({ $0.isWhitespace && !$0.isNewline }) else {
            error(node, "\(what) must not be empty")
            return nil
        }
        return text
    }

    mutating func bool(_ node: Node, what: String) -> Bool? {
        guard let value = Self.plainBool(node) else {
            error(node, "\(what) must be true or false, not \(Self.describe(node))")
            return nil
        }
        return value
    }

    mutating func int(_ node: Node, what: String, range: ClosedRange<Int>? = nil) -> Int? {
        guard let value = Self.plainInt(node) else {
            error(node, "\(what) must be a whole number, not \(Self.describe(node))")
            return nil
        }
        if let range, !range.contains(value) {
            error(node, "\(what) must be between \(range.lowerBound) and \(range.upperBound), not \(value)")
            return nil
        }
        return value
    }

    mutating func number(_ node: Node, what: String) -> Double? {
        guard let value = Self.plainInt(node).map(Double.init) ?? Self.plainDouble(node) else {
            error(node, "\(what) must be a number, not \(Self.describe(node))")
            return nil
        }
        return value
    }

    mutating func duration(_ node: Node, what: String, allowZero: Bool = true) -> Duration? {
        guard case .scalar(let scalar) = node, !Self.isNull(node) else {
            error(
                node, "\(what) must be a duration like 30s, 15m, 1h30m or 500ms, not \(Self.describe(node))")
            return nil
        }
        guard let value = JobDuration.parse(scalar.string) else {
            error(
                node,
                "\(what): '\(scalar.string)' is not a duration; write it like 30s, 15m, 1h30m, 500ms or 1d")
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
            "\(what) must be one of \(names.joined(separator: ", ")), not '\(text)'\(Suggestion.hint(for: text, in: names))"
        )
        return nil
    }

    /// A list of strings; a single string is taken as a list of one.
    mutating func stringList(_ node: Node, what: String) -> [(String, Node)]? {
        if case .scalar = node, !Self.isNull(node), let text = node.scalar?.string { return [(text, node)] }
        guard case .sequence(let sequence) = node else {
            error(node, "\(what) must be a list, like [a, b], not \(Self.describe(node))")
            return nil
        }
        var result: [(String, Node)] = []
        for item in sequence {
            if let text = string(item, what: "each item of \(what)") { result.append((text, item)) }
        }
        return result
    }

    /// Any YAML value as JSON-shaped data (for `with:`).
    mutating func json(_ node: Node) -> JSONValue {
        switch node {
        case .scalar(let scalar):
            if Self.isNull(node) { return .null }
            if let value = Self.plainBool(node) { return .bool(value) }
            if let value = Self.plainInt(node) { return .int(value) }
            if let value = Self.plainDouble(node) { return .double(value) }
            return .string(scalar.string)
        case .sequence(let sequence):
            return .array(sequence.map { json($0) })
        case .mapping:
            var object: [String: JSONValue] = [:]
            for entry in entries(node, what: "this map") ?? [] { object[entry.key] = json(entry.value) }
            return .object(object)
        case .alias:
            error(node, "YAML aliases are not supported here; write the value out")
            return .null
        }
    }
}
