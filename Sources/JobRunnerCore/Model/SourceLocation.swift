/// A place in a job file, for diagnostics that point a user at the line to fix.
public struct SourceLocation: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The file's path as the user named it (relative paths stay relative).
    public var file: String
    /// Line number, starting at 1.
    public var line: Int
    /// Column number, starting at 1.
    public var column: Int

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String { "\(file):\(line):\(column)" }
}
