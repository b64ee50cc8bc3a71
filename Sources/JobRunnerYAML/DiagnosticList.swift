import JobRunnerCore

/// The diagnostics of a load, at most ``perFile`` per file: a file with a million bad lines
/// must not cost more memory (nor more output) than the file itself.
///
/// Each file keeps its first ``perFile`` problems by location; the rest are only counted, and
/// one closing line at the first of them says how many more there were.
struct DiagnosticList {
    /// At most this many problems are listed for one file.
    static let perFile = 50

    private struct Omitted {
        var errors = 0
        var warnings = 0
        var first: SourceLocation
    }

    /// The listed problems of each file, sorted by location, at most ``perFile`` each.
    private var kept: [String: [Diagnostic]] = [:]
    private var omitted: [String: Omitted] = [:]

    init() {}

    /// Lists `diagnostic`, or counts it when its file already has ``perFile`` problems listed
    /// that all come before it. A problem already listed is not listed again: the jobs of one
    /// matrix, and the jobs that merge one anchor, share their places and so their problems,
    /// and their repeats must not take the room of other problems.
    mutating func append(_ diagnostic: Diagnostic) {
        let file = diagnostic.location.file
        var list = kept.removeValue(forKey: file) ?? []
        defer { kept[file] = list }
        let place = Self.key(diagnostic.location)
        /// Whether `diagnostic` is among the listed problems at its place, just before `end`.
        func isListed(before end: Int) -> Bool {
            var index = end
            while index > list.startIndex, Self.key(list[index - 1].location) == place {
                if list[index - 1] == diagnostic { return true }
                index -= 1
            }
            return false
        }
        // Problems mostly arrive in file order, so the common case is a look at the last one.
        if list.count == Self.perFile, let last = list.last, Self.key(last.location) <= place {
            if !isListed(before: list.endIndex) { count(diagnostic.severity, at: diagnostic.location) }
            return
        }
        var index = list.endIndex
        while index > list.startIndex, Self.key(list[index - 1].location) > place { index -= 1 }
        if isListed(before: index) { return }
        list.insert(diagnostic, at: index)
        if list.count > Self.perFile, let dropped = list.popLast() {
            count(dropped.severity, at: dropped.location)
        }
    }

    mutating func append(contentsOf diagnostics: some Sequence<Diagnostic>) {
        for diagnostic in diagnostics { append(diagnostic) }
    }

    /// Adds another list's problems, its counted ones included.
    mutating func append(_ other: DiagnosticList) {
        for list in other.kept.values { append(contentsOf: list) }
        for more in other.omitted.values {
            count(errors: more.errors, warnings: more.warnings, at: more.first)
        }
    }

    private mutating func count(_ severity: Diagnostic.Severity, at location: SourceLocation) {
        count(errors: severity == .error ? 1 : 0, warnings: severity == .error ? 0 : 1, at: location)
    }

    /// Counts problems that are not listed, the first of them at `location`.
    mutating func count(errors: Int, warnings: Int, at location: SourceLocation) {
        var entry = omitted[location.file] ?? Omitted(first: location)
        if Self.key(location) < Self.key(entry.first) { entry.first = location }
        entry.errors += errors
        entry.warnings += warnings
        omitted[location.file] = entry
    }

    private static func key(_ location: SourceLocation) -> (Int, Int) { (location.line, location.column) }

    /// Whether any problem, listed or counted, is an error.
    var hasErrors: Bool { kept.values.contains { $0.hasErrors } || omitted.values.contains { $0.errors > 0 } }

    /// Every listed problem sorted by location, each file's closing line after its own.
    var all: [Diagnostic] {
        var result: [Diagnostic] = []
        for file in Set(kept.keys).union(omitted.keys).sorted() {
            result.append(contentsOf: kept[file] ?? [])
            if let more = omitted[file] { result.append(Self.closing(more, file: file)) }
        }
        return result
    }

    /// 12345 as `12,345`, the same in every locale.
    static func grouped(_ number: Int) -> String {
        var digits = Array(String(number))
        var index = digits.count - 3
        while index > 0 {
            digits.insert(",", at: index)
            index -= 3
        }
        return String(digits)
    }

    private static func closing(_ more: Omitted, file: String) -> Diagnostic {
        func counted(_ count: Int, _ word: String) -> String {
            "\(grouped(count)) more \(word)\(count == 1 ? "" : "s")"
        }
        let what =
            more.errors > 0
            ? counted(more.errors, "error")
                + (more.warnings > 0 ? " and \(counted(more.warnings, "warning"))" : "")
            : counted(more.warnings, "warning")
        return Diagnostic(
            more.errors > 0 ? .error : .warning, at: more.first,
            "… and \(what) in \(file), from here on (only the first \(perFile) problems of a file are listed); fix those and validate again"
        )
    }
}
