import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerLMDB

/// The store writes job and attempt records with its own JSON writer; these check that what it
/// writes reads back as the same record, and means the same as `JSONEncoder`'s bytes.
@Suite struct RecordJSONTests {
    static let awkward = [
        "", "plain", "quote \" and back\\slash", "new\nline\ttab\u{1}\u{1F}", "é 漢字 🚀", "/a/b",
    ]
    let date = Date(timeIntervalSinceReferenceDate: 815_000_000.123_456_7)

    @Test(arguments: awkward) func jobRecordsRoundTrip(text: String) throws {
        let full = JobRecord(
            jobID: text, occurrence: text, pipeline: text, needs: [text, "b"], maxAttempts: 5,
            state: .failed,
            reason: .ended(.message(text)), attempts: 3, uncountedAttempts: 1, crashedInARow: 2, exitCode: -1,
            firstStartedAt: date, startedAt: date.addingTimeInterval(0.001), finishedAt: Date.distantPast,
            nextAttemptAt: Date(timeIntervalSince1970: 0))
        var waiting = full
        waiting.state = .waiting
        waiting.reason = .waiting(.constraint(text))
        waiting.waitingSince = date
        for record in [full, waiting, JobRecord(jobID: text, pipeline: "p", maxAttempts: nil)] {
            let bytes = RecordJSON.encode(record)
            #expect(try JSONDecoder().decode(JobRecord.self, from: Data(bytes)) == record)
            #expect(try sameJSON(bytes, Array(JSONEncoder().encode(record))))
        }
    }

    @Test(arguments: awkward) func attemptRecordsRoundTrip(text: String) throws {
        let full = AttemptRecord(
            jobID: text, occurrence: text, number: 2, outcome: .tempfail, startedAt: date, finishedAt: date,
            exitCode: 75, signal: 9, reason: text, pid: 4242, pidStartTime: UInt64.max, logPath: text)
        for record in [full, AttemptRecord(jobID: text, number: 1, startedAt: date)] {
            let bytes = RecordJSON.encode(record)
            #expect(try JSONDecoder().decode(AttemptRecord.self, from: Data(bytes)) == record)
            #expect(try sameJSON(bytes, Array(JSONEncoder().encode(record))))
        }
    }

    /// Equal as JSON values: the same members with the same values, whatever their order.
    private func sameJSON(_ left: [UInt8], _ right: [UInt8]) throws -> Bool {
        let a = try JSONSerialization.jsonObject(with: Data(left)) as? NSDictionary
        let b = try JSONSerialization.jsonObject(with: Data(right)) as? NSDictionary
        return a != nil && a == b
    }
}
