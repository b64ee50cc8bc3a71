import JobRunnerCore

extension NodeReader {
    /// Whether a key is YAML's merge key `<<` (written plain; files are typed without a
    /// resolver, so the key is recognised here).
    func isMergeKey(_ node: Node) -> Bool {
        tree.isPlain(node, "<<")
    }

    /// The entries a merge key brings in: those of one map (`<<: *common`), or of a list of maps
    /// (`<<: [*a, *b]`), where a key of an earlier map wins over the same key of a later one, as
    /// YAML's merge key type says. The maps' own merge keys are followed.
    mutating func mergedEntries(_ value: Node, what: @autoclosure () -> String) -> [Entry] {
        let sources: [Node]
        switch tree.kind(value) {
        case .mapping:
            sources = [value]
        case .sequence:
            sources = Array(tree.items(value))
        case .scalar:
            error(
                value,
                "the merge key << in \(what()) takes a map, usually an alias like <<: *common, or a list of them like <<: [*a, *b]"
            )
            return []
        }
        var result: [Entry] = []
        var seen = Set<String>()
        for source in sources {
            guard tree.kind(source) == .mapping else {
                error(
                    source,
                    "each item merged with << into \(what()) must be a map, usually an alias like *common")
                continue
            }
            for var entry in entries(source, what: what()) ?? [] where seen.insert(entry.key).inserted {
                entry.isMerged = true
                result.append(entry)
            }
        }
        return result
    }
}
