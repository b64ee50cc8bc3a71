import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerCLI

/// Dates shown to people, and the end of a log shown under a failure.
@Suite struct OutputHelpersTests {
    @Test func aMomentOfAnotherDayCarriesItsDate() {
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        #expect(
            Timestamps.moment(now.addingTimeInterval(-5), now: now)
                == Timestamps.clock(now.addingTimeInterval(-5)))
        let yesterday = now.addingTimeInterval(-86_400)
        let shown = Timestamps.moment(yesterday, now: now)
        #expect(shown.hasSuffix(" " + Timestamps.clock(yesterday)))
        #expect(shown.count == "2026-11-22 06:43:02".count)
        #expect(shown.hasPrefix("2026-11-"))
    }

    @Test func theTailIsTheLastLinesEvenOfABigLog() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tail-\(UUID().uuidString).log"
        ).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text = (1...20_000).map { "line \($0)" }.joined(separator: "\n") + "\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let tail = LogTail.lastLines(of: path, count: 20)
        #expect(tail.first == "line 19981")
        #expect(tail.last == "line 20000")
        #expect(LogTail.lastLines(of: path + ".missing", count: 20).isEmpty)

        try "no newline at the end".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(LogTail.lastLines(of: path, count: 20) == ["no newline at the end"])
    }

    /// A line too long for the window read used to be dropped as a fragment: a failure that
    /// ended in one showed nothing. Long lines are now cut, and say so.
    @Test func aLongLastLineIsCutNotDropped() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tail-\(UUID().uuidString).log"
        ).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let long = String(repeating: "y", count: 70_000)
        try ("first\n" + long).write(toFile: path, atomically: true, encoding: .utf8)
        let cut = String(repeating: "y", count: LogTail.width) + " … (line of 70000 bytes, cut)"
        #expect(LogTail.lastLines(of: path, count: 20) == ["first", cut])
        #expect(LogTail.lastLines(of: path, count: 1) == [cut])

        // A line longer than the search shows its known part, marked at both ends.
        let huge = Data(repeating: UInt8(ascii: "z"), count: 3 << 20)
        try (Data("a\n".utf8) + huge + Data("\n".utf8)).write(to: URL(fileURLWithPath: path))
        let fragment = LogTail.lastLines(of: path, count: 20)
        #expect(
            fragment == [
                "… " + String(repeating: "z", count: LogTail.width) + " … (line of more than "
                    + "\(LogTail.searchLimit) bytes, cut)"
            ])

        try "é\n\nshort\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(LogTail.lastLines(of: path, count: 20) == ["é", "", "short"])
        #expect(LogTail.lastLines(of: path, count: 2) == ["", "short"])
        try "\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(LogTail.lastLines(of: path, count: 20) == [""])
    }

    /// A resumed run of one job says "job", not "jobs".
    @Test func aResumedRunOfOneJobIsSaidInTheSingular() {
        func line(_ final: Int, of total: Int) -> String? {
            PlainProgress.line(
                for: OpenedRun(runID: "R", resumed: true, finalJobs: final, totalJobs: total, time: Date()))
        }
        #expect(line(0, of: 1) == "resuming    run R: 0 of 1 job final already")
        #expect(line(1, of: 3) == "resuming    run R: 1 of 3 jobs final already")
    }
}
