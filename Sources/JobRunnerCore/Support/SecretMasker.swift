/// Replaces secret values by `***` in what jobrunner writes (SPEC 3.1): attempt logs, outputs,
/// reasons, events, progress and messages.
///
/// A value of several lines is also masked line by line, since output often arrives re-wrapped
/// or indented; lines shorter than ``minimumLineLength`` are left, as masking every `}` or
/// `ok` would hide more than it protects.
///
/// The secrets are kept in a byte trie (``SecretTrie``), so each byte of output costs one walk
/// down that trie, not one comparison per secret: 2,000 secrets over 27 MB of output took over
/// 180 s when every secret was tried at every byte.
public struct SecretMasker: Sendable, Hashable {
    /// What a secret is replaced by.
    public static let mask = "***"
    /// The shortest line of a multi-line secret that is masked on its own.
    public static let minimumLineLength = 4

    /// The byte strings replaced, longest first, so a secret that holds another is masked whole.
    public let secrets: [[UInt8]]
    /// The same strings as a trie, which finds the longest one at a position in one walk.
    private let trie: SecretTrie

    /// A masker of these values; empty values are ignored.
    public init(values: some Sequence<String>) {
        var found = Set<[UInt8]>()
        for value in values where !value.isEmpty {
            found.insert(Array(value.utf8))
            let lines = value.split(whereSeparator: \.isNewline)
            if lines.count > 1 {
                for line in lines where line.utf8.count >= Self.minimumLineLength {
                    found.insert(Array(line.utf8))
                }
            }
        }
        secrets = found.sorted {
            $0.count != $1.count ? $0.count > $1.count : $0.lexicographicallyPrecedes($1)
        }
        trie = SecretTrie(secrets)
    }

    public static func == (left: SecretMasker, right: SecretMasker) -> Bool { left.secrets == right.secrets }
    public func hash(into hasher: inout Hasher) { hasher.combine(secrets) }

    /// A masker that masks nothing.
    public static let none = SecretMasker(values: [])

    /// Whether there is anything to mask.
    public var isEmpty: Bool { secrets.isEmpty }

    /// The length of the longest secret, in bytes.
    public var longest: Int { secrets.first?.count ?? 0 }

    /// `text` with every secret replaced by `***`.
    public func mask(_ text: String) -> String {
        guard !isEmpty, text.utf8.count >= (secrets.last?.count ?? 0) else { return text }
        var stream = MaskingStream(self)
        var output = stream.feed(Array(text.utf8))
        output += stream.finish()
        return String(decoding: output, as: UTF8.self)
    }

    /// Whether any secret starts with `byte`: most bytes of most output start none, and are
    /// passed on after this one look-up.
    @inline(__always)
    fileprivate func mayStart(_ byte: UInt8) -> Bool { trie.rootChild(byte) != 0 }

    /// The longest secret that starts at `bytes[index]` (`length`, 0 for none), and whether a
    /// longer one may start there too, cut off by the end of `bytes` (`cutOff`).
    @inline(__always)
    fileprivate func match(in bytes: [UInt8], at index: Int) -> (length: Int, cutOff: Bool) {
        trie.longestMatch(in: bytes, at: index)
    }
}

/// Byte strings in a trie of flat arrays: node 0 is the root, whose children are found in a
/// table of 256 entries; every other node's children are a sorted run of `edgeBytes` /
/// `edgeTargets`, searched by halves. A walk from a position costs one step per byte that still
/// matches some secret, whatever the number of secrets.
struct SecretTrie: Sendable {
    /// The child of the root for each byte; 0 for none.
    private var root = [Int32](repeating: 0, count: 256)
    /// For each node: where its edges start in `edgeBytes`, and how many there are.
    private var edgeStart: [Int32] = [0]
    private var edgeCount: [Int32] = [0]
    /// For each node: whether a secret ends there.
    private var terminal: [Bool] = [false]
    private var edgeBytes: [UInt8] = []
    private var edgeTargets: [Int32] = []

    init(_ strings: [[UInt8]]) {
        // Built with a dictionary per node, then flattened.
        var children: [[UInt8: Int32]] = [[:]]
        var ends: [Bool] = [false]
        for string in strings {
            var node = 0
            for byte in string {
                if let next = children[node][byte] {
                    node = Int(next)
                } else {
                    children.append([:])
                    ends.append(false)
                    let next = Int32(children.count - 1)
                    children[node][byte] = next
                    node = Int(next)
                }
            }
            ends[node] = true
        }
        terminal = ends
        edgeStart = [Int32](repeating: 0, count: children.count)
        edgeCount = [Int32](repeating: 0, count: children.count)
        for (node, edges) in children.enumerated() {
            if node == 0 {
                for (byte, target) in edges { root[Int(byte)] = target }
                continue
            }
            edgeStart[node] = Int32(edgeBytes.count)
            edgeCount[node] = Int32(edges.count)
            for (byte, target) in edges.sorted(by: { $0.key < $1.key }) {
                edgeBytes.append(byte)
                edgeTargets.append(target)
            }
        }
    }

    @inline(__always)
    func rootChild(_ byte: UInt8) -> Int32 { root[Int(byte)] }

    /// The child of `node` (not the root) along `byte`; 0 for none.
    @inline(__always)
    private func child(of node: Int, _ byte: UInt8) -> Int {
        var low = Int(edgeStart[node])
        var high = low + Int(edgeCount[node])
        while low < high {
            let middle = (low + high) >> 1
            let found = edgeBytes[middle]
            if found == byte { return Int(edgeTargets[middle]) }
            if found < byte { low = middle + 1 } else { high = middle }
        }
        return 0
    }

    /// See ``SecretMasker/match(in:at:)``.
    func longestMatch(in bytes: [UInt8], at index: Int) -> (length: Int, cutOff: Bool) {
        var node = Int(root[Int(bytes[index])])
        guard node != 0 else { return (0, false) }
        var length = 0
        var position = index + 1
        while true {
            if terminal[node] { length = position - index }
            guard edgeCount[node] > 0 else { return (length, false) }
            guard position < bytes.count else { return (length, true) }
            node = child(of: node, bytes[position])
            guard node != 0 else { return (length, false) }
            position += 1
        }
    }
}

/// Masks a stream of bytes that arrives in pieces: a secret split across two writes, or across
/// a line break within one, is still masked. What could be the start of a secret (at most the
/// longest secret's length less one byte) is held back until more bytes or the end show
/// whether it is one.
public struct MaskingStream: Sendable {
    private let masker: SecretMasker
    private var pending: [UInt8] = []

    public init(_ masker: SecretMasker) { self.masker = masker }

    /// The bytes of `input` that can be written now, masked.
    public mutating func feed(_ input: some Collection<UInt8>) -> [UInt8] {
        guard !masker.isEmpty else { return Array(input) }
        pending.append(contentsOf: input)
        return drain(final: false)
    }

    /// What was held back, masked: call once the stream has ended.
    public mutating func finish() -> [UInt8] {
        guard !masker.isEmpty else { return [] }
        return drain(final: true)
    }

    private mutating func drain(final: Bool) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(pending.count)
        var index = 0
        var held = pending.count
        while index < pending.count {
            guard masker.mayStart(pending[index]) else {
                output.append(pending[index])
                index += 1
                continue
            }
            let found = masker.match(in: pending, at: index)
            // A longer secret may still be arriving that starts here (with this one or not).
            if found.cutOff && !final {
                held = index
                break
            }
            if found.length > 0 {
                output.append(contentsOf: SecretMasker.mask.utf8)
                index += found.length
            } else {
                output.append(pending[index])
                index += 1
            }
        }
        if index >= pending.count { held = pending.count }
        pending.removeFirst(held)
        return output
    }
}
