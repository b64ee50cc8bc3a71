import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerLMDB

/// Resuming reads each job record only as far as its progress: it must read what the whole
/// reader reads, and decline exactly what the whole reader declines (the store then reads the
/// record whole, by `JSONDecoder` if need be).
@Suite struct RecordJSONProgressTests {
    func progress(_ bytes: [UInt8]) -> JobProgress? {
        bytes.withUnsafeBytes { RecordJSON.decodeJobProgress($0) }
    }

    func whole(_ bytes: [UInt8]) -> JobRecord? {
        bytes.withUnsafeBytes { RecordJSON.decodeJob($0) }
    }

    /// The reader of rows exactly as written: what the general reader reads, or nil.
    func written(_ bytes: [UInt8]) -> JobProgress? {
        let direct = bytes.withUnsafeBytes { RecordJSON.decodeWrittenJobProgress($0) }
        if let direct { #expect(direct == progress(bytes)) }
        return direct
    }

    /// Rows as a run writes them, in plain ASCII: each read by the reader of written rows.
    @Test func readsPlainRowsWhereTheyMustBe() {
        for state in JobState.allCases {
            for date in RecordJSONTests.dates {
                var record = RecordJSONTests.fullJob("plain", state: state, date: date)
                #expect(written(RecordJSON.encode(record)) != nil, "\(record)")
                record.allowFailure = false
                record.when = .success
                record.reason = nil
                record.exitCode = nil
                record.firstStartedAt = nil
                record.nextAttemptAt = nil
                #expect(written(RecordJSON.encode(record)) != nil, "\(record)")
                record.needs = []
                record.maxAttempts = nil
                #expect(written(RecordJSON.encode(record)) != nil, "\(record)")
            }
        }
    }

    @Test(arguments: RecordJSONTests.awkward) func readsWhatTheWholeReaderReads(text: String) {
        for state in JobState.allCases {
            for date in RecordJSONTests.dates {
                let bytes = RecordJSON.encode(RecordJSONTests.fullJob(text, state: state, date: date))
                #expect(progress(bytes) == whole(bytes).map(JobProgress.init))
                _ = written(bytes)
            }
        }
        let bare = RecordJSON.encode(JobRecord(jobID: text, pipeline: text, maxAttempts: nil))
        #expect(progress(bare) == whole(bare).map(JobProgress.init))
    }

    @Test func declinesExactlyWhatTheWholeReaderDeclines() throws {
        let bytes = RecordJSON.encode(RecordJSONTests.fullJob("é \" \\ \u{1F680}"))
        for length in 0..<bytes.count {
            #expect(progress(Array(bytes[..<length])) == nil, "a record cut at \(length) bytes")
            #expect(written(Array(bytes[..<length])) == nil, "a record cut at \(length) bytes")
        }
        let plain = RecordJSON.encode(RecordJSONTests.fullJob("plain"))
        for length in 0..<plain.count {
            #expect(written(Array(plain[..<length])) == nil, "a record cut at \(length) bytes")
        }
        let texts = [
            #"{"jobID":"a","pipeline":"p","state":"failed","attempts":1,"later":true}"#,
            #"{"jobID":"a","pipeline":"p","state":"sleeping","attempts":1}"#,
            #"{"jobID":"a","pipeline":"p","state":"failed","attempts":1} x"#,
            #"{"jobID":"a","pipeline":"p","needs":["b",1],"state":"failed","attempts":1}"#,
            #"{"jobID":"a","pipeline":"p","needs":"b","state":"failed","attempts":1}"#,
            #"{"jobID":"a","pipeline":"p","maxAttempts":1.5,"state":"failed","attempts":1}"#,
            #"{"jobID":"a","pipeline":7,"state":"failed","attempts":1}"#,
            #"{"jobID":"a","state":"failed","attempts":1}"#,
            #"{"jobID":"a","pipeline":"p","state":"failed","attempts":1,"allowFailure":"yes"}"#,
            #"{"jobID":"a","pipeline":"p","state":"failed","attempts":1,"when":"sometimes"}"#,
            #"{"jobID":"a","pipeline":"p","needs":[],"state":"failed","attempts":1,"when":"always"}"#,
            #"{"jobID":"a","pipeline":"p","needs":null,"state":"failed","attempts":1,"allowFailure":true}"#,
        ]
        for text in texts {
            let bytes = Array(text.utf8)
            #expect(progress(bytes) == whole(bytes).map(JobProgress.init), "\(text)")
            _ = written(bytes)
        }
        #expect(progress(Array(texts[10].utf8))?.state == .failed)
    }
}
