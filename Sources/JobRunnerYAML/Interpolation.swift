import Foundation
import JobRunnerCore

/// `${NAME}` and `${NAME:-default}` in `env:` and `with:` string values (SPEC 3.1).
///
/// `NAME` is read from the runner's environment (with `--env-file` added); `${NAME:-default}`
/// gives `default` when `NAME` is unset or empty, and the default may itself hold `${…}`.
/// `${matrix.KEY}` is the value of a matrix job's key. `$$` is one `$`; any other `$` stays as
/// written, so `$HOME` passes through to be read by whatever uses the value. An unset `NAME`
/// without a default is an error: a job should not run with a value nobody gave it.
public struct Interpolation: Sendable {
    /// Why a value cannot be expanded, in words for a diagnostic at the value.
    public struct Failure: Error, Equatable, Sendable {
        public var message: String
    }

    /// Where `${NAME}` is looked up.
    public var environment: [String: String]
    /// A matrix job's values, for `${matrix.KEY}`; nil for a job without `matrix:`.
    public var matrix: [String: String]?

    public init(environment: [String: String], matrix: [String: String]? = nil) {
        self.environment = environment
        self.matrix = matrix
    }

    /// Whether a value needs expanding at all (most do not; they are kept as they are).
    public static func mayExpand(_ text: String) -> Bool { text.utf8.contains(UInt8(ascii: "$")) }

    /// How deep defaults may nest (`${A:-${B:-…}}`): deeper is refused rather than followed,
    /// so that no value can make the expansion recurse without bound.
    public static let nestingLimit = 64

    /// The value with every `${…}` replaced and every `$$` made `$`.
    ///
    /// Linear in the value's length: where each `${` closes is found in one pass before
    /// anything is expanded, and the expansion reads the value's bytes in place.
    public func expand(_ text: String) -> Result<String, Failure> {
        guard Self.mayExpand(text) else { return .success(text) }
        let bytes = Array(text.utf8)
        var expansion = Expansion(bytes: bytes, closes: Self.closingBraces(bytes))
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        if let failure = expand(bytes.indices, into: &output, in: &expansion, depth: 0) {
            return .failure(failure)
        }
        return .success(String(decoding: output, as: UTF8.self))
    }

    /// One value being expanded: its bytes, and for each `{` of a `${`, the `}` that closes it.
    private struct Expansion {
        let bytes: [UInt8]
        let closes: [Int: Int]
    }

    /// Expands `bytes[range]` onto `output`; the failure, if any.
    private func expand(
        _ range: Range<Int>, into output: inout [UInt8], in expansion: inout Expansion, depth: Int
    ) -> Failure? {
        let bytes = expansion.bytes
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "$") else {
                output.append(byte)
                index += 1
                continue
            }
            let next = index + 1
            guard next < range.upperBound else {
                output.append(byte)
                break
            }
            switch bytes[next] {
            case UInt8(ascii: "$"):
                output.append(byte)
                index = next + 1
            case UInt8(ascii: "{"):
                guard let close = expansion.closes[next], close < range.upperBound else {
                    return Failure(
                        message: "'${' has no closing '}'; write ${NAME}, ${NAME:-default}, or $$ for a '$'")
                }
                if let failure = reference(next + 1..<close, into: &output, in: &expansion, depth: depth) {
                    return failure
                }
                index = close + 1
            default:
                output.append(byte)
                index = next
            }
        }
        return nil
    }

    /// Expands the inside of one `${…}`, `bytes[inside]`, onto `output`; the failure, if any.
    private func reference(
        _ inside: Range<Int>, into output: inout [UInt8], in expansion: inout Expansion, depth: Int
    ) -> Failure? {
        let bytes = expansion.bytes
        // The first `:-` ends the name; a name is short, so this stops early.
        var separator: Int?
        var index = inside.lowerBound
        while index + 1 < inside.upperBound {
            if bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: "-") {
                separator = index
                break
            }
            index += 1
        }
        let name = String(
            decoding: bytes[inside.lowerBound..<(separator ?? inside.upperBound)], as: UTF8.self)
        let fallback = separator.map { $0 + 2..<inside.upperBound }
        if name.hasPrefix("matrix.") {
            let key = String(name.dropFirst("matrix.".count))
            guard let matrix else {
                return Failure(message: "${\(name)} is used in a job without 'matrix:'")
            }
            guard let value = matrix[key] else {
                let keys = matrix.keys.sorted().map { "matrix.\($0)" }.joined(separator: ", ")
                return Failure(
                    message:
                        "${\(name)}: the job's matrix has no key \(VisibleText.quoted(key)); it has \(keys)")
            }
            output.append(contentsOf: value.utf8)
            return nil
        }
        guard Self.isVariableName(name) else {
            let whole = String(decoding: bytes[inside], as: UTF8.self)
            return Failure(
                message:
                    "'${\(VisibleText.shortened(whole))}' is not a variable reference; write ${NAME} or ${NAME:-default}, with NAME of letters, digits and '_', or $$ for a '$'"
            )
        }
        if let value = environment[name], !(fallback != nil && value.isEmpty) {
            output.append(contentsOf: value.utf8)
            return nil
        }
        if let fallback {
            guard depth < Self.nestingLimit else {
                return Failure(
                    message:
                        "defaults nest more than \(Self.nestingLimit) deep (${\(name):-${…:-…}}); set one of the variables or give a plain default"
                )
            }
            return expand(fallback, into: &output, in: &expansion, depth: depth + 1)
        }
        return Failure(
            message:
                "${\(name)} is not set in the runner's environment; set it, put it in a file given with --env-file, or give a default: ${\(name):-value}"
        )
    }

    /// For each `{` that follows a `$`, the offset of the `}` that closes it, counting nested
    /// `${…}`; a `{` left open has no entry. One pass, whatever the nesting.
    private static func closingBraces(_ bytes: [UInt8]) -> [Int: Int] {
        var closes: [Int: Int] = [:]
        var open: [Int] = []
        for (index, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: "{"), index > 0, bytes[index - 1] == UInt8(ascii: "$") {
                open.append(index)
            } else if byte == UInt8(ascii: "}"), let opening = open.popLast() {
                closes[opening] = index
            }
        }
        return closes
    }

    /// `[A-Za-z_][A-Za-z0-9_]*`, the names a shell can set.
    public static func isVariableName(_ name: some StringProtocol) -> Bool {
        guard let first = name.utf8.first, !(0x30...0x39).contains(first) else { return false }
        return name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x5F
        }
    }
}
