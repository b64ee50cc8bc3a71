import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerCLI

/// `--progress plain` lines carry the reason of every event that has one.
@Suite struct ProgressLineTests {
    func line(_ kind: RunEvent.Kind, reason: String?) -> String? {
        PlainProgress.line(
            for: RunEvent(time: Date(), run: "r", job: "hb", kind: kind, reason: reason))
    }

    @Test func aSkippedOccurrenceAndACancelledJobSayWhy() {
        #expect(
            line(.disabled, reason: "the last occurrence still runs")
                == "disabled    hb: the last occurrence still runs")
        #expect(line(.cancelled, reason: "cancelled by operator") == "cancelled   hb: cancelled by operator")
        #expect(line(.cancelled, reason: nil) == "cancelled   hb")
    }
}
