import Foundation
import JobRunnerCore

/// The end of an attempt's log, shown under its `failed` line (SPEC 4).
struct LogTail {
    /// How many lines a failure shows.
    static let lineCount = 20
    /// How much of the file's end is read to find them: a log of very long lines shows less.
    private static let window: UInt64 = 64 * 1024

    /// Where attempt logs live: `<directory>/<run>/<job>/<attempt>.log`.
    let directory: String

    func path(run: String, job: String, attempt: Int) -> String {
        LogLayout.attemptLog(in: directory, runID: run, jobID: job, attempt: attempt)
    }

    /// The last ``lineCount`` lines of an attempt's log; empty when it has none.
    func lines(run: String, job: String, attempt: Int) -> [String] {
        Self.lastLines(of: path(run: run, job: job, attempt: attempt), count: Self.lineCount)
    }

    /// The last `count` lines of a file, without their line breaks.
    static func lastLines(of path: String, count: Int) -> [String] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd() else { return [] }
        let start = size > window ? size - window : 0
        try? handle.seek(toOffset: start)
        let data = handle.readDataToEndOfFile()
        var lines = String(decoding: data, as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false
        )
        .map(String.init)
        if lines.last == "" { lines.removeLast() }
        // The first line of a window that starts mid-file is a fragment.
        if start > 0, !lines.isEmpty { lines.removeFirst() }
        return Array(lines.suffix(count))
    }

    /// Lines indented under a progress line, so they read as belonging to it.
    static func indented(_ lines: [String]) -> String {
        // What a job wrote, shown with its control characters escaped: it cannot drive the terminal.
        lines.map { "    │ " + VisibleText.escaped($0) + "\n" }.joined()
    }
}
