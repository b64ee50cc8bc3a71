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

    public var description: String { "\(location): \(severity.rawValue): \(message)" }
}

extension [Diagnostic] {
    /// Whether any of these is an error (warnings do not stop a run).
    public var hasErrors: Bool { contains { $0.severity == .error } }

    /// Sorted by file, line and column, so output reads top to bottom.
    public func sortedByLocation() -> [Diagnostic] {
        sorted {
            ($0.location.file, $0.location.line, $0.location.column)
                < ($1.location.file, $1.location.line, $1.location.column)
        }
    }
}
