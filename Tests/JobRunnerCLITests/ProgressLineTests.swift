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
        // Before: `disabled    hb: the last occurrence still runs`, which read as a
        // configuration change (the event stays `disabled`, SPEC 5.12).
        let scheduled = Date(timeIntervalSince1970: 1_800_000_000)
        let skipped = PlainProgress.line(
            for: RunEvent(
                time: Date(), run: "r", job: "hb", kind: .disabled,
                reason: "the previous occurrence still runs (overlap: skip)", occurrence: scheduled))
        #expect(
            skipped
                == "skipped     hb @ \(Timestamps.clock(scheduled)): the previous occurrence still runs (overlap: skip)"
        )
        #expect(line(.cancelled, reason: "cancelled by operator") == "cancelled   hb: cancelled by operator")
        #expect(line(.cancelled, reason: nil) == "cancelled   hb")
    }

    @Test func missedOccurrencesAreOneLinePerJob() {
        #expect(
            PlainProgress.missedLine("tick", 14, .none)
                == "missed      14 occurrences of tick (catchUp: none)")
        #expect(
            PlainProgress.missedLine("daily", 1, .latest)
                == "missed      1 occurrence of daily (catchUp: latest)")
    }

    @Test func anOccurrencesLinesNameIt() {
        let scheduled = Date(timeIntervalSince1970: 1_800_000_000)
        let started = PlainProgress.line(
            for: RunEvent(
                time: Date(), run: "r", job: "tick", attempt: 1, kind: .started, occurrence: scheduled))
        #expect(started == "started     tick @ \(Timestamps.clock(scheduled)) (attempt 1)")
        let event = EventsWriter.json(
            RunEvent(time: scheduled, run: "r", job: "tick", kind: .started, occurrence: scheduled))
        #expect(event.contains(#""scheduledAt": "\#(Timestamps.iso(scheduled))""#), "\(event)")
    }
}
