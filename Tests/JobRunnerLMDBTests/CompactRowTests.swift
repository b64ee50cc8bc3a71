import Foundation
import JobRunnerCore
import JobRunnerJSON
import Testing

@testable import JobRunnerLMDB

/// Job rows leave out the members at their defaults (an empty occurrence, no needs, no
/// uncounted attempts, no crashes in a row). Every reader, of this version and of earlier ones
/// of schema 1, reads such a row as the full one; and this version still reads the full rows
/// earlier versions wrote.
@Suite struct CompactRowTests {
    /// A job row as schema 1 was written before members were left out at their defaults.
    static func fullRow(_ job: JobRecord) -> [UInt8] {
        var writer = JSONWriter(capacity: 320)
        writer.beginObject()
        writer.member("jobID", job.jobID)
        writer.member("occurrence", job.occurrence)
        writer.member("pipeline", job.pipeline)
        writer.member("needs", job.needs)
        writer.member("maxAttempts", job.maxAttempts)
        writer.member("state", job.state.rawValue)
        writer.member("reason", job.reason?.words)
        writer.member("attempts", job.attempts)
        writer.member("uncountedAttempts", job.uncountedAttempts)
        writer.member("crashedInARow", job.crashedInARow)
        writer.member("exitCode", job.exitCode)
        writer.member("firstStartedAt", job.firstStartedAt)
        writer.member("startedAt", job.startedAt)
        writer.member("finishedAt", job.finishedAt)
        writer.member("nextAttemptAt", job.nextAttemptAt)
        writer.member("waitingSince", job.waitingSince)
        if job.allowFailure { writer.member("allowFailure", true) }
        if job.when != .success { writer.member("when", job.when.rawValue) }
        // Not in rows written before it came (absent there, as it is when nil).
        writer.member("logProblem", job.logProblem)
        writer.endObject()
        return writer.bytes
    }

    /// An attempt row as it was written before `RowWriter`.
    static func earlierAttemptRow(_ attempt: AttemptRecord) -> [UInt8] {
        var writer = JSONWriter(capacity: 320)
        writer.beginObject()
        writer.member("jobID", attempt.jobID)
        writer.member("occurrence", attempt.occurrence)
        writer.member("number", attempt.number)
        writer.member("outcome", attempt.outcome?.rawValue)
        writer.member("startedAt", attempt.startedAt)
        writer.member("finishedAt", attempt.finishedAt)
        writer.member("exitCode", attempt.exitCode)
        writer.member("signal", attempt.signal)
        writer.member("reason", attempt.reason)
        writer.member("pid", attempt.pid)
        writer.member("pidStartTime", attempt.pidStartTime)
        writer.member("logPath", attempt.logPath)
        writer.member("logProblem", attempt.logProblem)
        writer.endObject()
        return writer.bytes
    }

    /// A finished job of a chain, as 20,000 of them are stored by a chained run.
    static let chainJob: JobRecord = {
        var job = JobRecord(
            jobID: "job-1", pipeline: "p", needs: ["job-0"], maxAttempts: 1, state: .succeeded, attempts: 1)
        job.firstStartedAt = Date(timeIntervalSinceReferenceDate: 817_202_450.765_848_8)
        job.startedAt = job.firstStartedAt
        job.finishedAt = Date(timeIntervalSinceReferenceDate: 817_202_451.036_632_7)
        return job
    }()

    @Test func aRowLeavesOutTheMembersAtTheirDefaults() {
        let row = String(decoding: RecordJSON.encode(Self.chainJob), as: UTF8.self)
        #expect(
            row
                == #"{"jobID":"job-1","pipeline":"p","needs":["job-0"],"maxAttempts":1,"state":"succeeded","attempts":1,"firstStartedAt":817202450.7658488,"startedAt":817202450.7658488,"finishedAt":817202451.0366327}"#
        )
        var head = Self.chainJob
        head.needs = []
        #expect(RecordJSON.encode(head).count == RecordJSON.encode(Self.chainJob).count - 18)
        #expect(Self.fullRow(head).count - RecordJSON.encode(head).count == 67)
    }

    /// Records with each defaulted member at its default and not, in every state, with text that
    /// needs escapes: every reader reads the row as it reads the full row of the same record.
    @Test(arguments: RecordJSONTests.awkward) func everyReaderReadsARowAsTheFullRow(text: String) throws {
        var records: [JobRecord] = []
        for state in JobState.allCases {
            let full = RecordJSONTests.fullJob(text, state: state)
            records.append(full)
            var bare = full
            bare.occurrence = ""
            bare.needs = []
            bare.uncountedAttempts = 0
            bare.crashedInARow = 0
            records.append(bare)
            records.append(JobRecord(jobID: text, pipeline: text, maxAttempts: nil, state: state))
        }
        for record in records {
            let row = RecordJSON.encode(record)
            let full = Self.fullRow(record)
            row.withUnsafeBytes { row in
                full.withUnsafeBytes { full in
                    #expect(RecordJSON.decodeJob(row) == record)
                    #expect(RecordJSON.decodeJob(full) == record)
                    #expect(RecordJSON.decodeJobProgress(row) == RecordJSON.decodeJobProgress(full))
                    #expect(RecordJSON.decodeJobProgress(row) == JobProgress(record))
                    #expect(
                        RecordJSON.decodeWrittenJobProgress(row) == RecordJSON.decodeWrittenJobProgress(full))
                    #expect(RecordJSON.state(in: row) == record.state)
                }
            }
            #expect(try JSONDecoder().decode(JobRecord.self, from: Data(row)) == record)
        }
    }

    /// Rows of plain ASCII, as runs write them, are read by the reader of rows as written,
    /// whichever members they leave out.
    @Test func theReaderOfWrittenRowsReadsRowsWithAndWithoutDefaults() {
        var record = RecordJSONTests.fullJob("plain")
        for occurrence in ["", "20270101T000000Z"] {
            for needs in [[], ["a"], ["a", "b"]] {
                for count in [0, 3] {
                    record.occurrence = occurrence
                    record.needs = needs
                    record.uncountedAttempts = count
                    record.crashedInARow = count
                    for row in [RecordJSON.encode(record), Self.fullRow(record)] {
                        let read = row.withUnsafeBytes { RecordJSON.decodeWrittenJobProgress($0) }
                        #expect(read == JobProgress(record), "\(String(decoding: row, as: UTF8.self))")
                    }
                }
            }
        }
    }

    /// A row as 47263c1 wrote it for a chained run, read by every reader.
    @Test func aRowAsAnEarlierVersionWroteItStillReads() throws {
        let stored = Array(
            #"{"jobID":"job-1","occurrence":"","pipeline":"p","needs":["job-0"],"maxAttempts":1,"state":"succeeded","attempts":1,"uncountedAttempts":0,"crashedInARow":0,"firstStartedAt":817202450.7658488,"startedAt":817202450.7658488,"finishedAt":817202451.0366327}"#
                .utf8)
        #expect(stored == Self.fullRow(Self.chainJob))
        stored.withUnsafeBytes { row in
            #expect(RecordJSON.decodeJob(row) == Self.chainJob)
            #expect(RecordJSON.decodeWrittenJobProgress(row) == JobProgress(Self.chainJob))
            #expect(RecordJSON.decodeJobProgress(row) == JobProgress(Self.chainJob))
            #expect(RecordJSON.state(in: row) == .succeeded)
        }
        #expect(try JSONDecoder().decode(JobRecord.self, from: Data(stored)) == Self.chainJob)
    }

    /// Attempt rows are written byte for byte as before (readers older than the direct attempt
    /// reader need every member).
    @Test(arguments: RecordJSONTests.awkward) func attemptRowsAreWrittenAsBefore(text: String) {
        let attempts = [
            RecordJSONTests.fullAttempt(text),
            AttemptRecord(jobID: text, number: .min, startedAt: .distantPast),
            AttemptRecord(
                jobID: text, number: 1, outcome: .succeeded, startedAt: RecordJSONTests.dates[0],
                finishedAt: RecordJSONTests.dates[6], logPath: "logs/\(text)/1.log"),
        ]
        for attempt in attempts {
            #expect(RecordJSON.encode(attempt) == Self.earlierAttemptRow(attempt))
        }
    }
}
