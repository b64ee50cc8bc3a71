import Foundation
import JobRunnerCore

/// The end of an attempt's log, shown under its `failed` line (SPEC 4).
struct LogTail {
    /// How many lines a failure shows.
    static let lineCount = 20
    /// How many characters of a line are shown; a longer line is cut, and says so.
    static let width = 200
    /// How far back from the end the starts of lines are looked for: a line that starts before
    /// is shown from there, marked as a fragment. Reading is bounded by this and ``chunk``.
    static let searchLimit: UInt64 = 1 << 20
    /// How much of the file is read at a time while looking for line starts.
    private static let chunk: UInt64 = 64 * 1024

    /// Where attempt logs live: `<directory>/<run>/<job>/<attempt>.log`.
    let directory: String

    func path(run: String, job: String, attempt: Int) -> String {
        LogLayout.attemptLog(in: directory, runID: run, jobID: job, attempt: attempt)
    }

    /// The last ``lineCount`` lines of an attempt's log; empty when it has none. A log that ends
    /// in a Swift crash report (a plugin that hit `fatalError` in its worker) shows the report's
    /// `Fatal error: …` line first, then what follows it up to the register dump and image list.
    func lines(run: String, job: String, attempt: Int) -> [String] {
        let path = path(run: run, job: job, attempt: attempt)
        let last = Self.lastLines(of: path, count: Self.crashSearchLines)
        return Self.crashTail(of: last, count: Self.lineCount) ?? Array(last.suffix(Self.lineCount))
    }

    /// How many of the last lines are searched for a crash report's fatal error.
    static let crashSearchLines = 400

    /// The lines of a crash report worth showing, when `lines` holds one: the last line with the
    /// runtime's `Fatal error:`, then the crash's headline and the crashed thread's frames (the
    /// other threads', which a report of several threads lists first, left out) until its
    /// registers or images begin, `count` lines at most; nil when `lines` holds no fatal error.
    static func crashTail(of lines: [String], count: Int) -> [String]? {
        guard let fatal = lines.lastIndex(where: { $0.contains("Fatal error:") }) else { return nil }
        func trimmed(_ line: String) -> Substring { line.drop { $0 == " " } }
        let report = lines[(fatal + 1)...].prefix { line in
            !(trimmed(line).hasPrefix("Registers:") || trimmed(line).hasPrefix("Images"))
        }
        func isThread(_ line: String) -> Bool { trimmed(line).hasPrefix("Thread ") }
        var after = Array(report)
        if let crashed = report.firstIndex(where: { isThread($0) && $0.contains(" crashed") }) {
            // The headline (before the first thread), then the crashed thread to the next one.
            let firstThread = report.firstIndex(where: isThread) ?? crashed
            let frames = report[crashed...].dropFirst().prefix { !isThread($0) }
            after = Array(report[..<firstThread]) + [report[crashed]] + frames
        }
        var shown = [lines[fatal]] + after.prefix(max(0, count - 2))
        let left = lines.count - fatal - shown.count
        if left > 0 { shown.append("… \(left) more lines of crash report in the log") }
        return shown
    }

    /// The last `count` lines of a file, without their line breaks, each cut to `width`
    /// characters: a cut line ends with ` … (line of N bytes, cut)`, and one whose start lies
    /// beyond ``searchLimit`` begins with `… `.
    static func lastLines(of path: String, count: Int, width: Int = LogTail.width) -> [String] {
        guard count > 0, let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd(), size > 0 else { return [] }
        // A final line break ends the last line rather than starting an empty one.
        let end = read(handle, from: size - 1, count: 1) == [0x0A] ? size - 1 : size
        let found = lineStarts(handle, before: end, count: count)
        let starts = found.starts.sorted()
        return starts.indices.map { index in
            let start = starts[index]
            let stop = index + 1 < starts.count ? starts[index + 1] - 1 : end
            let length = stop - start
            let bytes = read(handle, from: start, count: min(length, UInt64(width) * 4))
            let text = String(decoding: bytes, as: UTF8.self)
            let isFragment = index == 0 && !found.complete
            var line = (isFragment ? "… " : "") + String(text.prefix(width))
            if UInt64(bytes.count) < length || text.count > width {
                line += " … (line of \(isFragment ? "more than " : "")\(length) bytes, cut)"
            }
            return line
        }
    }

    /// The offsets where the last `count` lines before `end` start, looking back at most
    /// ``searchLimit`` bytes; `complete` is false when the first of them is only where the
    /// search stopped, inside a longer line.
    private static func lineStarts(_ handle: FileHandle, before end: UInt64, count: Int)
        -> (starts: [UInt64], complete: Bool)
    {
        var starts: [UInt64] = []
        var position = end
        while position > 0 {
            guard end - position < searchLimit else { return (starts + [position], false) }
            let from = position >= chunk ? position - chunk : 0
            let bytes = read(handle, from: from, count: position - from)
            for index in bytes.indices.reversed() where bytes[index] == 0x0A {
                starts.append(from + UInt64(index) + 1)
                if starts.count == count { return (starts, true) }
            }
            position = from
        }
        return (starts + [0], true)
    }

    private static func read(_ handle: FileHandle, from offset: UInt64, count: UInt64) -> [UInt8] {
        guard count > 0, (try? handle.seek(toOffset: offset)) != nil,
            let data = try? handle.read(upToCount: Int(count))
        else { return [] }
        return Array(data)
    }

    /// Lines indented under a progress line, so they read as belonging to it.
    static func indented(_ lines: [String]) -> String {
        // What a job wrote, shown with its control characters escaped: it cannot drive the terminal.
        lines.map { "    │ " + VisibleText.escaped($0) + "\n" }.joined()
    }
}
