import Foundation
import JobRunnerCore

/// A `--env-file` (SPEC 3.1): dotenv lines that add to the runner's environment before
/// `${NAME}` is expanded.
///
/// Lines are `NAME=value`, optionally after `export `; blank lines and lines starting with `#`
/// are skipped. A value in double quotes may hold `\n`, `\t`, `\"`, `\\` and `\$`; one in single
/// quotes is taken as written; an unquoted value ends at ` #` (a comment) and is trimmed. Values
/// are not expanded. A variable already set in the runner's environment keeps its value, so
/// `TARGET=prod jobrunner run --env-file defaults.env` runs with `prod`.
public enum EnvFile {
    /// The variables of a file, or every problem in it (each at its line and column).
    public static func load(path: String) -> (
        variables: [(name: String, value: String)], problems: [Diagnostic]
    ) {
        let at = SourceLocation(file: path, line: 1, column: 1)
        guard let data = FileManager.default.contents(atPath: path) else {
            return (
                [], [Diagnostic(at: at, "cannot read this --env-file; check the path and its permissions")]
            )
        }
        guard let text = String(data: data, encoding: .utf8) else {
            return ([], [Diagnostic(at: at, "this --env-file is not UTF-8 text")])
        }
        return parse(text, path: path)
    }

    /// The variables of a file's text, in file order (a later line of one name wins).
    public static func parse(_ text: String, path: String) -> (
        variables: [(name: String, value: String)], problems: [Diagnostic]
    ) {
        var variables: [(name: String, value: String)] = []
        var problems: [Diagnostic] = []
        // `isNewline`: "\r\n" is one Character, which a split on "\n" never finds.
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
            .enumerated()
        {
            let indent = line.prefix { $0 == " " || $0 == "\t" }.count
            var rest = line.dropFirst(indent)
            if rest.isEmpty || rest.hasPrefix("#") { continue }
            if rest.hasPrefix("export ") { rest = rest.dropFirst("export ".count).drop { $0 == " " } }
            func problem(_ column: Int, _ message: String) {
                problems.append(
                    Diagnostic(at: SourceLocation(file: path, line: index + 1, column: column), message))
            }
            guard let equals = rest.firstIndex(of: "=") else {
                problem(
                    indent + 1,
                    "expected NAME=value; lines of an --env-file are NAME=value, # comments or blank")
                continue
            }
            let name = trimmed(rest[..<equals])
            guard Interpolation.isVariableName(name) else {
                problem(
                    indent + 1,
                    "\(VisibleText.quoted(name)) is not a variable name; use letters, digits and '_', not starting with a digit"
                )
                continue
            }
            let valueColumn = line.distance(from: line.startIndex, to: equals) + 2
            switch value(of: rest[rest.index(after: equals)...]) {
            case .success(let value): variables.append((name, value))
            case .failure(let failure): problem(valueColumn, failure.message)
            }
        }
        return (variables, problems)
    }

    private static func value(of raw: Substring) -> Result<String, EnvFileProblem> {
        let text = raw.drop { $0 == " " || $0 == "\t" }
        guard let quote = text.first, quote == "\"" || quote == "'" else {
            var value = text
            if let comment = commentStart(in: value) { value = value[..<comment] }
            return .success(trimmed(value))
        }
        var value = ""
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            let character = text[index]
            if character == quote {
                let after = text[text.index(after: index)...].drop { $0 == " " || $0 == "\t" }
                guard after.isEmpty || after.hasPrefix("#") else {
                    return .failure(
                        EnvFileProblem("unexpected text after the closing quote; put a # before a comment"))
                }
                return .success(value)
            }
            if quote == "\"", character == "\\", text.index(after: index) < text.endIndex {
                index = text.index(after: index)
                switch text[index] {
                case "n": value.append("\n")
                case "t": value.append("\t")
                case "r": value.append("\r")
                case let other: value.append(other)
                }
            } else {
                value.append(character)
            }
            index = text.index(after: index)
        }
        return .failure(EnvFileProblem("the value's \(quote) quote is not closed on this line"))
    }

    /// `text` without the spaces and tabs around it. (Foundation's `trimmingCharacters` took
    /// most of the time of a file of 100,000 lines.)
    private static func trimmed(_ text: Substring) -> String {
        var slice = text.drop { $0 == " " || $0 == "\t" }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }

    /// Where ` #` starts an unquoted value's comment, if it has one.
    private static func commentStart(in text: Substring) -> Substring.Index? {
        var previous: Character?
        for index in text.indices {
            if text[index] == "#", previous == " ",
                let space = text.index(index, offsetBy: -1, limitedBy: text.startIndex)
            {
                return space
            }
            previous = text[index]
        }
        return nil
    }

    /// `variables` added to `environment` where it does not set a name already.
    public static func adding(
        _ variables: [(name: String, value: String)], to environment: [String: String]
    ) -> [String: String] {
        var result = environment
        for (name, value) in variables where environment[name] == nil { result[name] = value }
        return result
    }
}

/// A problem with one value of an env file.
struct EnvFileProblem: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
