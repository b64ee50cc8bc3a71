import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerLMDB

/// The direct reader of stored job records gives what `JSONDecoder` gives, and declines (nil)
/// whatever it does not read, so the store falls back to `JSONDecoder`.
@Suite struct RecordJSONReadingTests {
    func read(_ bytes: [UInt8]) -> JobRecord? {
        bytes.withUnsafeBytes { RecordJSON.decodeJob($0) }
    }

    @Test(arguments: RecordJSONTests.awkward) func readsWhatTheWriterWrites(text: String) {
        for state in JobState.allCases {
            for date in RecordJSONTests.dates {
                let record = RecordJSONTests.fullJob(text, state: state, date: date)
                #expect(read(RecordJSON.encode(record)) == record)
            }
        }
        let bare = JobRecord(jobID: text, pipeline: text, maxAttempts: nil)
        #expect(read(RecordJSON.encode(bare)) == bare)
    }

    @Test(arguments: RecordJSONTests.awkward + [#"a","state":"succeeded"#, #"","state":"failed"#])
    func findsTheStateInTheBytes(text: String) throws {
        for state in JobState.allCases {
            let record = RecordJSONTests.fullJob(text, state: state)
            #expect(RecordJSON.encode(record).withUnsafeBytes { RecordJSON.state(in: $0) } == state)
            var bare = JobRecord(jobID: text, pipeline: text, maxAttempts: nil)
            bare.state = state
            #expect(RecordJSON.encode(bare).withUnsafeBytes { RecordJSON.state(in: $0) } == state)
        }
        let cut = Array(RecordJSON.encode(RecordJSONTests.fullJob(text)).prefix(20))
        _ = cut.withUnsafeBytes { RecordJSON.state(in: $0) }  // must not read past the end
    }

    @Test func readsEachRecordWithOneOptionalLeftOut() {
        let job = RecordJSONTests.fullJob("x")
        let edits: [(inout JobRecord) -> Void] = [
            { $0.maxAttempts = nil }, { $0.reason = nil }, { $0.exitCode = nil }, { $0.firstStartedAt = nil },
            { $0.startedAt = nil }, { $0.finishedAt = nil }, { $0.nextAttemptAt = nil },
            { $0.waitingSince = nil },
        ]
        for edit in edits {
            var record = job
            edit(&record)
            #expect(read(RecordJSON.encode(record)) == record)
        }
    }

    /// Records written by `JSONEncoder` (earlier versions): read the same, or declined.
    @Test(arguments: RecordJSONTests.awkward) func readsOrDeclinesWhatJSONEncoderWrote(text: String) throws {
        let record = RecordJSONTests.fullJob(text)
        let bytes = Array(try JSONEncoder().encode(record))
        if let direct = read(bytes) { #expect(direct == record) }
    }

    @Test func declinesWhatItDoesNotKnowAndNeverReadsPastTheEnd() throws {
        let bytes = RecordJSON.encode(RecordJSONTests.fullJob("é \" \\ \u{1F680}"))
        for length in 0..<bytes.count {
            #expect(read(Array(bytes[..<length])) == nil, "a record cut at \(length) bytes")
        }
        let unknown = #"{"jobID":"a","pipeline":"p","state":"failed","attempts":1,"later":true}"#
        #expect(read(Array(unknown.utf8)) == nil)
        let badState = #"{"jobID":"a","pipeline":"p","state":"sleeping","attempts":1}"#
        #expect(read(Array(badState.utf8)) == nil)
        let trailing = #"{"jobID":"a","pipeline":"p","state":"failed","attempts":1} x"#
        #expect(read(Array(trailing.utf8)) == nil)
        let loneSurrogate = #"{"jobID":"\ud800","pipeline":"p","state":"failed","attempts":1}"#
        #expect(read(Array(loneSurrogate.utf8)) == nil)
        let pair = #"{"jobID":"\ud83d\ude80","pipeline":"p","state":"failed","attempts":1}"#
        #expect(read(Array(pair.utf8))?.jobID == "\u{1F680}")
    }

    func readAttempt(_ bytes: [UInt8]) -> AttemptRecord? {
        bytes.withUnsafeBytes { RecordJSON.decodeAttempt($0) }
    }

    @Test(arguments: RecordJSONTests.awkward) func readsTheAttemptsTheWriterWrites(text: String) {
        for date in RecordJSONTests.dates {
            var full = RecordJSONTests.fullAttempt(text, date: date)
            full.pidStartTime = 123_456_789
            #expect(readAttempt(RecordJSON.encode(full)) == full)
        }
        let bare = AttemptRecord(jobID: text, number: .min, startedAt: RecordJSONTests.dates[0])
        #expect(readAttempt(RecordJSON.encode(bare)) == bare)
        // A start time beyond Int's range is left to JSONDecoder, never read wrong.
        let huge = RecordJSONTests.fullAttempt(text)
        let direct = readAttempt(RecordJSON.encode(huge))
        #expect(direct == nil || direct == huge)
    }

    @Test func declinesAttemptsItDoesNotKnowAndNeverReadsPastTheEnd() {
        var attempt = RecordJSONTests.fullAttempt("é \" \\ \u{1F680}")
        attempt.pidStartTime = 7
        let bytes = RecordJSON.encode(attempt)
        for length in 0..<bytes.count {
            #expect(readAttempt(Array(bytes[..<length])) == nil, "a record cut at \(length) bytes")
        }
        let unknown = #"{"jobID":"a","number":1,"startedAt":0,"later":true}"#
        #expect(readAttempt(Array(unknown.utf8)) == nil)
        let badOutcome = #"{"jobID":"a","number":1,"outcome":"sleeping","startedAt":0}"#
        #expect(readAttempt(Array(badOutcome.utf8)) == nil)
        let noStart = #"{"jobID":"a","number":1}"#
        #expect(readAttempt(Array(noStart.utf8)) == nil)
    }
}
