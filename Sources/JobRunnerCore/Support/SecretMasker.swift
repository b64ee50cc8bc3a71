/// Replaces secret values by `***` in what jobrunner writes (SPEC 3.1): attempt logs, outputs,
/// reasons, events, progress and messages.
///
/// A value of several lines is also masked line by line, since output often arrives re-wrapped
/// or indented; lines shorter than ``minimumLineLength`` are left, as masking every `}` or
/// `ok` would hide more than it protects.
public struct SecretMasker: Sendable, Hashable {
    /// What a secret is replaced by.
    public static let mask = "***"
    /// The shortest line of a multi-line secret that is masked on its own.
    public static let minimumLineLength = 4

    /// The byte strings replaced, longest first, so a secret that holds another is masked whole.
    public let secrets: [[UInt8]]

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
    }

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

    /// The secret that starts at `bytes[index]`, whole or cut off by the end of `bytes`.
    fileprivate func match(in bytes: [UInt8], at index: Int) -> (length: Int, complete: Bool)? {
        var partial = false
        for secret in secrets where secret[0] == bytes[index] {
            let available = bytes.count - index
            let compared = min(available, secret.count)
            var equal = true
            for offset in 1..<max(compared, 1) where bytes[index + offset] != secret[offset] {
                equal = false
                break
            }
            guard equal else { continue }
            if compared == secret.count { return (secret.count, true) }
            partial = true
        }
        return partial ? (0, false) : nil
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
            guard let found = masker.match(in: pending, at: index) else {
                output.append(pending[index])
                index += 1
                continue
            }
            if found.complete {
                // A longer secret may still be arriving that starts with this one.
                if !final, found.length < masker.longest, longerMayFollow(at: index, length: found.length) {
                    held = index
                    break
                }
                output.append(contentsOf: SecretMasker.mask.utf8)
                index += found.length
            } else if final {
                output.append(pending[index])
                index += 1
            } else {
                held = index
                break
            }
        }
        if index >= pending.count { held = pending.count }
        pending.removeFirst(held)
        return output
    }

    /// Whether the bytes from `index` to the end are the start of a secret longer than `length`.
    private func longerMayFollow(at index: Int, length: Int) -> Bool {
        let available = pending.count - index
        return masker.secrets.contains { secret in
            secret.count > length && secret.count > available
                && secret.prefix(available).elementsEqual(pending[index...])
        }
    }
}
