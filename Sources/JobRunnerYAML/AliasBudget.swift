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
    /// At most this many bytes of scalars may be added by aliases, over the whole file: a few
    /// aliases of one long string must not stand for gigabytes either.
    static let defaultByteLimit = 16 << 20
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
    let byteLimit: Int
    /// What a value stands for once its aliases are written out: how many values, and how
    /// many bytes of scalars.
    private struct Size {
        var values: Int
        var bytes: Int

        static func + (a: Size, b: Size) -> Size {
            Size(values: saturatingAdd(a.values, b.values), bytes: saturatingAdd(a.bytes, b.bytes))
        }
    }

    /// The maps and lists open at this point: their anchors and sizes so far.
    private var open: [(anchor: String?, size: Size)] = []
    private var sizes: [String: Size] = [:]
    private var added = Size(values: 0, bytes: 0)

    init(limit: Int = defaultLimit, byteLimit: Int = defaultByteLimit) {
        self.limit = limit
        self.byteLimit = byteLimit
    }

    mutating func scalar(anchor: String?, bytes: Int) { close(Size(values: 1, bytes: bytes), anchor: anchor) }

    mutating func alias(_ anchor: String, line: Int, column: Int) throws(Exceeded) {
        guard let size = sizes[anchor] else { return }
        added = added + size
        if added.values > limit {
            throw Exceeded(
                message:
                    "YAML aliases here make this file stand for more than \(limit) values (*\(anchor) stands for \(size.values == Int.max ? "too many" : String(size.values)) values at this point, as in a 'billion laughs' file); write the values out or alias less",
                line: line, column: column)
        }
        if added.bytes > byteLimit {
            throw Exceeded(
                message:
                    "YAML aliases here make this file stand for more than \(byteLimit >> 20) MiB of text (*\(anchor) stands for \(size.bytes == Int.max ? "too many" : String(size.bytes)) bytes at this point); write the values out or alias less",
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
        open.append((anchor, Size(values: 1, bytes: 0)))
    }

    mutating func end() {
        if let finished = open.popLast() { close(finished.size, anchor: finished.anchor) }
    }

    private mutating func close(_ size: Size, anchor: String?) {
        if let anchor { sizes[anchor] = size }
        if !open.isEmpty { open[open.count - 1].size = open[open.count - 1].size + size }
    }

    private static func saturatingAdd(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }
}
