import Foundation
import JobRunnerLMDB
import Testing

/// Attempt records store log paths relative to the state directory; older ones are absolute.
@Suite struct LogPathTests {
    @Test func relativeAndOldAbsolutePathsAreFoundInAMovedStateDirectory() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "logpath-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let state = StateDirectory(path: root + "/moved")
        #expect(state.resolveLogPath("logs/R/build/1.log") == root + "/moved/logs/R/build/1.log")
        // An absolute path of the directory before it moved: looked for under the new one.
        #expect(
            state.resolveLogPath("/somewhere/old/logs/R/build/1.log") == root + "/moved/logs/R/build/1.log")
        // An absolute path that still exists is taken as it is.
        try FileManager.default.createDirectory(
            atPath: root + "/other/logs", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: root + "/other/logs/x.log", contents: Data())
        #expect(state.resolveLogPath(root + "/other/logs/x.log") == root + "/other/logs/x.log")
    }
}
