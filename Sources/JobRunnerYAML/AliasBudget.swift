// libyaml, as Yams ships it: its events show each alias where it is written, before Yams
// builds (and hashes) anything.
import CYaml
import JobRunnerCore

/// Caps what YAML aliases may add to a job file, and how deep it may nest, before the file is
/// composed: a small file must not make the loader build a huge one ("billion laughs": nine
/// levels of anchors, each aliasing the last nine times, make a 422-byte file stand for a
/// billion strings).
///
/// Yams composes an alias as the node its anchor names, shared rather than copied, yet walking
/// the tree visits every copy, and a map's keys are hashed whole (an alias used as a key costs
/// its full expansion). So the check reads libyaml's events first, in one pass: the size of
/// each anchored value once written out, and a running total of what aliases add.
enum AliasBudget {
    /// At most this many values may be added by aliases, over the whole file: far more than
    /// sharing defaults between a few thousand jobs needs.
    static let defaultLimit = 100_000
    /// Deeper nesting than this is refused, by libyaml itself (its default limit) for every
    /// file, and here for files with aliases; no job file needs a tenth of it.
    static let maxDepth = 1000

    /// Why a file was refused, and where (1-based).
    struct Exceeded: Error, Equatable {
        var message: String
        var line: Int
        var column: Int
    }

    /// Checks a file's text; YAML syntax errors are left to the composer, which reports them.
    /// - Throws: ``Exceeded`` at the alias that crossed the limit, or at the value nested too deep.
    static func check(_ text: String, limit: Int = defaultLimit) throws(Exceeded) {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return }
        defer { yaml_parser_delete(&parser) }
        var bytes = Array(text.utf8)
        let problem = bytes.withUnsafeMutableBufferPointer { buffer -> Exceeded? in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            return scan(&parser, limit: limit)
        }
        if let problem { throw problem }
    }

    private static func scan(_ parser: inout yaml_parser_t, limit: Int) -> Exceeded? {
        // The maps and lists open at this point: their anchors and sizes so far.
        var open: [(anchor: String?, size: Int)] = []
        var sizes: [String: Int] = [:]
        var added = 0
        func close(_ size: Int, anchor: String?) {
            if let anchor { sizes[anchor] = size }
            if !open.isEmpty { open[open.count - 1].size = saturatingAdd(open[open.count - 1].size, size) }
        }
        while true {
            var event = yaml_event_t()
            guard yaml_parser_parse(&parser, &event) == 1 else { return nil }
            defer { yaml_event_delete(&event) }
            let mark = event.start_mark
            switch event.type {
            case YAML_STREAM_END_EVENT:
                return nil
            case YAML_SCALAR_EVENT:
                close(1, anchor: name(event.data.scalar.anchor))
            case YAML_ALIAS_EVENT:
                guard let anchor = name(event.data.alias.anchor), let size = sizes[anchor] else { continue }
                added = saturatingAdd(added, size)
                if added > limit {
                    return Exceeded(
                        message:
                            "YAML aliases here make this file stand for more than \(limit) values (*\(anchor) stands for \(size == Int.max ? "too many" : String(size)) values at this point, as in a 'billion laughs' file); write the values out or alias less",
                        line: Int(mark.line) + 1, column: Int(mark.column) + 1)
                }
                close(size, anchor: nil)
            case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                guard open.count < maxDepth else {
                    return Exceeded(
                        message: "values are nested more than \(maxDepth) levels deep; flatten this file",
                        line: Int(mark.line) + 1, column: Int(mark.column) + 1)
                }
                let anchor =
                    event.type == YAML_SEQUENCE_START_EVENT
                    ? name(event.data.sequence_start.anchor) : name(event.data.mapping_start.anchor)
                open.append((anchor, 1))
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                if let finished = open.popLast() { close(finished.size, anchor: finished.anchor) }
            default:
                continue
            }
        }
    }

    private static func name(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    private static func saturatingAdd(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }
}
