import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerLMDB

/// The run record and the attempts' outcomes, written and read back without `JSONEncoder` and
/// `JSONDecoder`: resuming a 100,000-job run reads a run record of 100,000 ids and up to
/// 100,000 attempts.
@Suite struct RunRecordJSONTests {
    static func fullRun(_ text: String, date: Date = RecordJSONTests.dates[0]) -> RunRecord {
        var run = RunRecord(
            id: text, state: .stopped, startedAt: date, finishedAt: date.addingTimeInterval(1),
            jobIDs: [text, "b", "", text + "2"], runnerPID: .max, pipelineLimits: [text: 8, "b": 0, "c": -1])
        run.occurrenceOf = text
        run.scheduledAt = Date(timeIntervalSince1970: 0)
        run.manual = true
        return run
    }

    func read(_ bytes: [UInt8]) -> RunRecord? {
        bytes.withUnsafeBytes { RecordJSON.decodeRun($0) }
    }

    @Test(arguments: RecordJSONTests.awkward) func runRecordsReadBackAsWritten(text: String) throws {
        let bare = RunRecord(
            id: text, state: .running, startedAt: RecordJSONTests.dates[0], jobIDs: [], runnerPID: 1)
        var runs = [bare] + RecordJSONTests.dates.map { Self.fullRun(text, date: $0) }
        for state in [RunState.running, .stopped, .succeeded, .failed] {
            var run = Self.fullRun(text)
            run.state = state
            runs.append(run)
        }
        for run in runs {
            let bytes = RecordJSON.encode(run)
            #expect(read(bytes) == run)
            #expect(try JSONDecoder().decode(RunRecord.self, from: Data(bytes)) == run)
            // What earlier versions stored: read the same, or left to JSONDecoder.
            let earlier = Array(try JSONEncoder().encode(run))
            if let direct = read(earlier) { #expect(direct == run) }
        }
    }

    @Test func declinesRunRecordsItDoesNotKnowAndNeverReadsPastTheEnd() {
        let bytes = RecordJSON.encode(Self.fullRun("é \" \\ \u{1F680}"))
        for length in 0..<bytes.count {
            #expect(read(Array(bytes[..<length])) == nil, "a record cut at \(length) bytes")
        }
        let base = #""id":"r","state":"running","startedAt":0,"jobIDs":["a"],"runnerPID":1"#
        #expect(read(Array("{\(base),\"pipelineLimits\":{}}".utf8))?.jobIDs == ["a"])
        for odd in [
            "{\(base)}", "{\(base),\"pipelineLimits\":{\"p\":1,\"p\":2}}",
            "{\(base),\"pipelineLimits\":{\"p\":1.5}}",
            "{\(base),\"pipelineLimits\":{},\"later\":1}", "{\(base),\"pipelineLimits\":[]}",
            #"{"id":"r","state":"asleep","startedAt":0,"jobIDs":[],"runnerPID":1,"pipelineLimits":{}}"#,
        ] {
            #expect(read(Array(odd.utf8)) == nil, "\(odd)")
        }
    }

    /// Whether an attempt has an outcome is found in its bytes, whatever its strings hold.
    @Test(arguments: RecordJSONTests.awkward + [#"x","outcome":"succeeded"#, #","outcome":""#])
    func findsWhetherAnAttemptHasAnOutcome(text: String) throws {
        func hasOutcome(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { RecordJSON.hasOutcome($0) } }
        for outcome in [nil] + AttemptOutcome.allCases.map(Optional.some) {
            var attempt = RecordJSONTests.fullAttempt(text)
            attempt.outcome = outcome
            #expect(hasOutcome(RecordJSON.encode(attempt)) == (outcome != nil))
            #expect(hasOutcome(Array(try JSONEncoder().encode(attempt))) == (outcome != nil))
            let bare = AttemptRecord(
                jobID: text, number: 1, outcome: outcome, startedAt: RecordJSONTests.dates[0])
            #expect(hasOutcome(RecordJSON.encode(bare)) == (outcome != nil))
        }
        #expect(!hasOutcome(Array("not json".utf8)) && !hasOutcome([]))
        #expect(hasOutcome(Array(#"{"outcome":"failed"}"#.utf8)))
        #expect(!hasOutcome(Array(#"{"reason":"\",\"outcome\":\"failed"}"#.utf8)))
    }
}
