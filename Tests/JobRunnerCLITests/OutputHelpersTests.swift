import Foundation
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
}
