import JobRunnerCore
import Yams

extension NodeReader {
    /// Whether a key is YAML's merge key `<<` (files are composed without Yams' resolver, so the
    /// key is recognised here).
    static func isMergeKey(_ node: Node) -> Bool {
        guard case .scalar(let scalar) = node else { return false }
        return scalar.string == "<<" && scalar.style == .plain
    }

    /// The entries a merge key brings in: those of one map (`<<: *common`), or of a list of maps
    /// (`<<: [*a, *b]`), where a key of an earlier map wins over the same key of a later one, as
    /// YAML's merge key type says. The maps' own merge keys are followed.
    mutating func mergedEntries(_ value: Node, what: String) -> [Entry] {
        let sources: [Node]
        switch value {
        case .mapping:
            sources = [value]
        case .sequence(let sequence):
            sources = Array(sequence)
        default:
            error(
                value,
                "the merge key << in \(what) takes a map, usually an alias like <<: *common, or a list of them like <<: [*a, *b]"
            )
            return []
        }
        var result: [Entry] = []
        var seen = Set<String>()
        for source in sources {
            guard case .mapping = source else {
                error(
                    source,
                    "each item merged with << into \(what) must be a map, usually an alias like *common")
                continue
            }
            for entry in entries(source, what: what) ?? [] where seen.insert(entry.key).inserted {
                result.append(entry)
            }
        }
        return result
    }
}
