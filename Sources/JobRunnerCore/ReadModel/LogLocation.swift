import Foundation

/// Where attempt logs are: the `logs` folder of a state directory, as attempt records name it.
public struct LogLocation: Sendable, Hashable {
    /// The state directory, absolute.
    public let stateDirectory: String

    /// The folder of attempt logs, relative to the state directory, as attempt records store it.
    public static let folder = "logs"

    public init(stateDirectory: String) {
        self.stateDirectory = stateDirectory
    }

    /// The folder of attempt logs, absolute.
    public var logsPath: String { stateDirectory + "/" + Self.folder }

    /// An attempt log's path as stored, made usable: a relative one is under the state directory;
    /// an absolute one (stored by earlier versions) is taken as is while it exists, else looked
    /// for at the same place under this state directory's `logs` (the directory was moved).
    public func resolve(_ stored: String) -> String {
        guard stored.hasPrefix("/") else { return stateDirectory + "/" + stored }
        if FileManager.default.fileExists(atPath: stored) { return stored }
        let parts = stored.split(separator: "/").map(String.init)
        if let index = parts.lastIndex(of: Self.folder) {
            return ([logsPath] + parts[(index + 1)...]).joined(separator: "/")
        }
        return stored
    }

    /// Where an attempt's log is: where its record says, else where the layout puts it.
    public func path(of attempt: AttemptRecord, runID: String) -> String {
        attempt.logPath.map(resolve)
            ?? LogLayout.attemptLog(in: logsPath, runID: runID, jobID: attempt.jobID, attempt: attempt.number)
    }
}
