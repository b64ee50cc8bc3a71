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

    /// The value with every `${…}` replaced and every `$$` made `$`.
    public func expand(_ text: String) -> Result<String, Failure> {
        guard Self.mayExpand(text) else { return .success(text) }
        var output = ""
        var index = text.startIndex
        while let dollar = text[index...].firstIndex(of: "$") {
            output += text[index..<dollar]
            let next = text.index(after: dollar)
            guard next < text.endIndex else {
                output += "$"
                index = next
                break
            }
            switch text[next] {
            case "$":
                output += "$"
                index = text.index(after: next)
            case "{":
                let open = text.index(after: next)
                guard let close = Self.closingBrace(in: text, from: open) else {
                    return .failure(
                        Failure(
                            message:
                                "'${' has no closing '}'; write ${NAME}, ${NAME:-default}, or $$ for a '$'"))
                }
                switch reference(String(text[open..<close])) {
                case .success(let value): output += value
                case .failure(let failure): return .failure(failure)
                }
                index = text.index(after: close)
            default:
                output += "$"
                index = next
            }
        }
        output += text[index...]
        return .success(output)
    }

    /// The value of the inside of one `${…}`.
    private func reference(_ inside: String) -> Result<String, Failure> {
        let name: Substring
        var fallback: Substring?
        if let separator = inside.range(of: ":-") {
            name = inside[..<separator.lowerBound]
            fallback = inside[separator.upperBound...]
        } else {
            name = Substring(inside)
        }
        if name.hasPrefix("matrix.") {
            let key = String(name.dropFirst("matrix.".count))
            guard let matrix else {
                return .failure(Failure(message: "${\(name)} is used in a job without 'matrix:'"))
            }
            guard let value = matrix[key] else {
                let keys = matrix.keys.sorted().map { "matrix.\($0)" }.joined(separator: ", ")
                return .failure(
                    Failure(
                        message:
                            "${\(name)}: the job's matrix has no key \(VisibleText.quoted(key)); it has \(keys)"
                    ))
            }
            return .success(value)
        }
        guard Self.isVariableName(name) else {
            return .failure(
                Failure(
                    message:
                        "'${\(inside)}' is not a variable reference; write ${NAME} or ${NAME:-default}, with NAME of letters, digits and '_', or $$ for a '$'"
                ))
        }
        if let value = environment[String(name)], !(fallback != nil && value.isEmpty) {
            return .success(value)
        }
        if let fallback { return expand(String(fallback)) }
        return .failure(
            Failure(
                message:
                    "${\(name)} is not set in the runner's environment; set it, put it in a file given with --env-file, or give a default: ${\(name):-value}"
            ))
    }

    /// The `}` that closes a `${` whose inside starts at `start`, counting nested `${…}`.
    private static func closingBrace(in text: String, from start: String.Index) -> String.Index? {
        var depth = 0
        var index = start
        var previous: Character?
        while index < text.endIndex {
            let character = text[index]
            if character == "{", previous == "$" {
                depth += 1
            } else if character == "}" {
                if depth == 0 { return index }
                depth -= 1
            }
            previous = character
            index = text.index(after: index)
        }
        return nil
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
