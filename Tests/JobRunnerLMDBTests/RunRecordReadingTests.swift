import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerLMDB

/// The direct reader of stored run records gives what `JSONDecoder` gives, and declines (nil)
/// whatever it does not read exactly so, for the store to fall back to `JSONDecoder`.
@Suite struct RunRecordReadingTests {
    func read(_ bytes: [UInt8]) -> RunRecord? {
        bytes.withUnsafeBytes { RecordJSON.decodeRun($0) }
    }

    func read(_ text: String) -> RunRecord? { read(Array(text.utf8)) }

    static func run(_ text: String, date: Date = RecordJSONTests.dates[0]) -> RunRecord {
        var run = RunRecord(
            id: text, state: .stopped, startedAt: date, finishedAt: date.addingTimeInterval(0.001),
            jobIDs: [text, "b", "", text + "2"], runnerPID: .max,
            pipelineLimits: [text: 0, "p": -3, "q": .max])
        run.occurrenceOf = text
        run.scheduledAt = Date(timeIntervalSince1970: 0)
        return run
    }

    /// What the store writes (`JSONEncoder`, members in any order) reads back whole.
    @Test(arguments: RecordJSONTests.awkward) func readsWhatJSONEncoderWrites(text: String) throws {
        for date in RecordJSONTests.dates {
            let run = Self.run(text, date: date)
            #expect(read(Array(try JSONEncoder().encode(run))) == run)
        }
        let bare = RunRecord(
            id: text, state: .running, startedAt: RecordJSONTests.dates[1], jobIDs: [], runnerPID: 0)
        #expect(read(Array(try JSONEncoder().encode(bare))) == bare)
        for state: RunState in [.running, .stopped, .succeeded, .failed, .skipped, .missed] {
            var run = bare
            run.state = state
            #expect(read(Array(try JSONEncoder().encode(run))) == run)
        }
    }

    @Test func readsNullAsAnAbsentOptional() {
        let text =
            #"{"id":"r","state":"running","startedAt":1.5,"finishedAt":null,"jobIDs":["a"],"runnerPID":7,"pipelineLimits":{},"occurrenceOf":null,"scheduledAt":null}"#
        let expected = RunRecord(
            id: "r", state: .running, startedAt: Date(timeIntervalSinceReferenceDate: 1.5), jobIDs: ["a"],
            runnerPID: 7)
        #expect(read(text) == expected)
        #expect((try? JSONDecoder().decode(RunRecord.self, from: Data(text.utf8))) == expected)
    }

    /// Whatever `JSONDecoder` refuses, or might read otherwise, is declined.
    @Test func declinesWhatItDoesNotReadExactly() throws {
        let bytes = Array(try JSONEncoder().encode(Self.run("é \" \\ \u{1F680}")))
        for length in 0..<bytes.count {
            #expect(read(Array(bytes[..<length])) == nil, "a record cut at \(length) bytes")
        }
        let base = #""state":"running","startedAt":1,"jobIDs":[],"runnerPID":7,"pipelineLimits":{}"#
        #expect(read(#"{"id":"r","# + base + "}") != nil)
        let declined = [
            #"{"id":"r","# + base + #","later":true}"#,  // a member it does not know
            #"{"id":"r","id":"s","# + base + "}",  // a member twice
            #"{"id":"r","finishedAt":null,"finishedAt":2,"# + base + "}",
            #"{"# + base + "}",  // no id
            #"{"id":null,"# + base + "}",
            #"{"id":"r","# + base.replacingOccurrences(of: "running", with: "sleeping") + "}",
            #"{"id":"r","# + base.replacingOccurrences(of: ":7", with: ":2147483648") + "}",
            #"{"id":"r","# + base.replacingOccurrences(of: ":7", with: ":07") + "}",
            #"{"id":"r","# + base.replacingOccurrences(of: ":7", with: ":7.0") + "}",
            #"{"id":"r","# + base.replacingOccurrences(of: "startedAt\":1", with: "startedAt\":+1") + "}",
            #"{"id":"r","# + base.replacingOccurrences(of: "startedAt\":1", with: "startedAt\":1.") + "}",
            #"{"id":"r","# + base.replacingOccurrences(of: "startedAt\":1", with: "startedAt\":01") + "}",
            #"{"id":"r","# + base.replacingOccurrences(of: "{}", with: #"{"p":1,"p":2}"#) + "}",
            #"{"id":"r","# + base.replacingOccurrences(of: "{}", with: #"{"p":1.5}"#) + "}",
            #"{"id":"r","# + base + "} x",
            #"{"\u0069d":"r","# + base + "}",  // an escaped member name
        ]
        for text in declined { #expect(read(text) == nil, "\(text)") }
    }

    /// Numbers JSON does not allow are left to `JSONDecoder` (which refuses them) in job
    /// records too: the reader used to read `01` as 1.
    @Test func jobRecordsWithNumbersJSONDoesNotAllowAreDeclined() {
        for attempts in ["01", "-01", "1.", "+1", ".5", "1e", "--1"] {
            let text = #"{"jobID":"a","pipeline":"p","state":"failed","attempts":"# + attempts + "}"
            #expect(Array(text.utf8).withUnsafeBytes { RecordJSON.decodeJob($0) } == nil, "\(attempts)")
            #expect((try? JSONDecoder().decode(JobRecord.self, from: Data(text.utf8))) == nil, "\(attempts)")
        }
        for date in ["01.5", "1.", "+1", ".5", "1e+", "-"] {
            let text = #"{"jobID":"a","pipeline":"p","state":"failed","attempts":1,"startedAt":"# + date + "}"
            #expect(Array(text.utf8).withUnsafeBytes { RecordJSON.decodeJob($0) } == nil, "\(date)")
        }
        let fine = #"{"jobID":"a","pipeline":"p","state":"failed","attempts":0,"startedAt":-0.5e-3}"#
        #expect(
            Array(fine.utf8).withUnsafeBytes { RecordJSON.decodeJob($0) }?.startedAt
                == Date(timeIntervalSinceReferenceDate: -0.0005))
    }
}
