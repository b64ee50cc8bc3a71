import JobRunnerCore

/// One problem found in the job files, printed as `FILE:LINE:COLUMN: error: MESSAGE`.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable {
        case error, warning
    }

    public var location: SourceLocation
    public var severity: Severity
    public var message: String

    public init(_ severity: Severity = .error, at location: SourceLocation, _ message: String) {
        self.location = location
        self.severity = severity
        self.message = message
    }

    /// One line: control characters and line breaks taken from the job file (a quoted value, a
    /// file name) are shown as escapes, so that nothing spills onto a line without a location.
    public var description: String {
        VisibleText.escaped("\(location): \(severity.rawValue): \(message)")
    }
}

extension [Diagnostic] {
    /// Whether any of these is an error (warnings do not stop a run).
    public var hasErrors: Bool { contains { $0.severity == .error } }

    /// Sorted by file, line and column, so output reads top to bottom; problems at one place
    /// keep their order (a file's closing "… and N more" line stays last).
    public func sortedByLocation() -> [Diagnostic] {
        enumerated().sorted {
            ($0.element.location.file, $0.element.location.line, $0.element.location.column, $0.offset)
                < ($1.element.location.file, $1.element.location.line, $1.element.location.column, $1.offset)
        }.map(\.element)
    }
}
