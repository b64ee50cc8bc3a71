/// Caps what YAML aliases may add to a job file, and how deep it may nest, while the file is
/// composed: a small file must not make the loader build a huge one ("billion laughs": nine
/// levels of anchors, each aliasing the last nine times, make a 422-byte file stand for a
/// billion strings).
///
/// An alias costs nothing in a ``YAMLTree`` (it is the index of its anchor's node), yet walking
/// the tree visits every copy, and a map's keys are compared whole (an alias used as a key costs
/// its full expansion). So the composer feeds this count libyaml's events as they come: the size
/// of each anchored value once written out, and a running total of what aliases add.
struct AliasBudget {
    /// At most this many values may be added by aliases, over the whole file: far more than
    /// sharing defaults between a few thousand jobs needs.
    static let defaultLimit = 100_000
    /// Deeper nesting than this is refused, by libyaml itself (its default limit) for every
    /// file, and here for files with aliases; no job file needs a tenth of it.
    static let maxDepth = 1000

    /// Why a file was refused, and where (0-based, as libyaml counts).
    struct Exceeded: Error, Equatable {
        var message: String
        var line: Int
        var column: Int
    }

    let limit: Int
    /// The maps and lists open at this point: their anchors and sizes so far.
    private var open: [(anchor: String?, size: Int)] = []
    private var sizes: [String: Int] = [:]
    private var added = 0

    init(limit: Int = defaultLimit) { self.limit = limit }

    mutating func scalar(anchor: String?) { close(1, anchor: anchor) }

    mutating func alias(_ anchor: String, line: Int, column: Int) throws(Exceeded) {
        guard let size = sizes[anchor] else { return }
        added = Self.saturatingAdd(added, size)
        if added > limit {
            throw Exceeded(
                message:
                    "YAML aliases here make this file stand for more than \(limit) values (*\(anchor) stands for \(size == Int.max ? "too many" : String(size)) values at this point, as in a 'billion laughs' file); write the values out or alias less",
                line: line, column: column)
        }
        close(size, anchor: nil)
    }

    mutating func start(anchor: String?, line: Int, column: Int) throws(Exceeded) {
        guard open.count < Self.maxDepth else {
            throw Exceeded(
                message: "values are nested more than \(Self.maxDepth) levels deep; flatten this file",
                line: line, column: column)
        }
        open.append((anchor, 1))
    }

    mutating func end() {
        if let finished = open.popLast() { close(finished.size, anchor: finished.anchor) }
    }

    private mutating func close(_ size: Int, anchor: String?) {
        if let anchor { sizes[anchor] = size }
        if !open.isEmpty { open[open.count - 1].size = Self.saturatingAdd(open[open.count - 1].size, size) }
    }

    private static func saturatingAdd(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }
}
