import Foundation
import JobRunnerCore

/// Where a key of a job's `with:` map stands: for a plugin's answer about one parameter (an
/// unknown key), found after the job files were loaded. The jobs keep only where their `with:`
/// map stands, so the file is read again, which happens only when a plugin refused a key.
public enum ParameterPlaces {
    /// The place of `key` in the map that starts at `mapping`; nil when the file or the key
    /// cannot be found there (the file changed, a key that comes from a merge `<<:`).
    public static func key(_ key: String, inMappingAt mapping: SourceLocation) -> SourceLocation? {
        guard let data = FileManager.default.contents(atPath: mapping.file),
            case .success(let composed) = YAMLComposer.compose(String(decoding: data, as: UTF8.self))
        else { return nil }
        let tree = composed.tree
        for index in tree.records.indices where tree.records[index].kind == .mapping {
            let node = YAMLTree.Node(index: index)
            guard tree.mark(node) == (mapping.line, mapping.column) else { continue }
            for pair in tree.pairs(node) where tree.text(pair.key) == key {
                let mark = tree.mark(pair.key)
                return SourceLocation(file: mapping.file, line: mark.line, column: mark.column)
            }
        }
        return nil
    }
}
