import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerLMDB

/// Every record the store writes, held to its `Codable` field by field: written with the JSON
/// layer and decoded with `JSONDecoder`; written with `JSONEncoder` and read with the JSON
/// layer (where the store reads it so); and the records the store once wrote with
/// `JSONEncoder`, byte for byte as it writes them with `.sortedKeys`.
@Suite struct RecordCodableTests {
    static let texts = JSONFixtures.awkward

    static func decoded<Record: Decodable>(_ type: Record.Type, _ bytes: [UInt8]) throws -> Record {
        try JSONDecoder().decode(type, from: Data(bytes))
    }

    static func read<Record>(_ bytes: [UInt8], _ reader: (UnsafeRawBufferPointer) -> Record?) -> Record? {
        bytes.withUnsafeBytes(reader)
    }

    // MARK: Jobs

    static func jobs(_ text: String) -> [JobRecord] {
        var records: [JobRecord] = []
        for (index, state) in JobState.allCases.enumerated() {
            let date = JSONFixtures.dates[index % JSONFixtures.dates.count]
            var full = JobRecord(
                jobID: text + "-id", occurrence: text, pipeline: text, needs: [text, "b", ""],
                maxAttempts: Int.max,
                state: state, reason: JobReason(words: text.isEmpty ? "x" : text, state: state),
                attempts: Int.max,
                uncountedAttempts: Int.min, crashedInARow: 3, exitCode: Int32.min, firstStartedAt: date,
                startedAt: date, finishedAt: date, nextAttemptAt: date)
            full.waitingSince = date
            full.allowFailure = true
            full.when = .always
            let bare = JobRecord(jobID: text, pipeline: text, maxAttempts: nil, state: state)
            records += [full, bare]
        }
        return records
    }

    @Test(arguments: texts) func jobRecords(text: String) throws {
        for record in Self.jobs(text) {
            let written = RecordJSON.encode(record)
            #expect(fieldDifferences(record, try Self.decoded(JobRecord.self, written)) == [])
            #expect(fieldDifferences(record, Self.read(written, RecordJSON.decodeJob) as Any) == [])
            let encoded = Array(try JSONEncoder().encode(record))
            #expect(fieldDifferences(record, Self.read(encoded, RecordJSON.decodeJob) as Any) == [])
            #expect(Self.read(written, RecordJSON.state(in:)) == record.state)
            let progress = JobProgress(record)
            #expect(fieldDifferences(progress, Self.read(written, RecordJSON.decodeJobProgress) as Any) == [])
            #expect(fieldDifferences(progress, Self.read(encoded, RecordJSON.decodeJobProgress) as Any) == [])
            // The quick way reads plain ASCII only; anything else is left to the general reader.
            let plain = text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x80 && $0 != 0x22 && $0 != 0x5C }
            let quick = Self.read(written, RecordJSON.decodeWrittenJobProgress)
            #expect(plain ? fieldDifferences(progress, quick as Any) == [] : quick == nil)
        }
    }

    /// The bytes of a job's row are those of the writer this layer replaced.
    @Test(arguments: texts) func jobRowsAreTheEarlierBytes(text: String) {
        for record in Self.jobs(text) {
            #expect(RecordJSON.encode(record) == EarlierRows.job(record))
        }
    }

    // MARK: Attempts

    static func attempts(_ text: String) -> [AttemptRecord] {
        JSONFixtures.dates.enumerated().flatMap { index, date -> [AttemptRecord] in
            let outcome = AttemptOutcome.allCases[index % AttemptOutcome.allCases.count]
            return [
                AttemptRecord(
                    jobID: text, occurrence: text, number: index == 0 ? Int.max : index, outcome: outcome,
                    startedAt: date, finishedAt: date, exitCode: Int32.max, signal: Int32.min, reason: text,
                    pid: Int32.max, pidStartTime: index == 1 ? UInt64.max : UInt64(Int64.max), logPath: text),
                AttemptRecord(jobID: text, number: -index, startedAt: date),
            ]
        }
    }

    @Test(arguments: texts) func attemptRecords(text: String) throws {
        for record in Self.attempts(text) {
            let written = RecordJSON.encode(record)
            #expect(written == EarlierRows.attempt(record))
            #expect(fieldDifferences(record, try Self.decoded(AttemptRecord.self, written)) == [])
            let encoded = Array(try JSONEncoder().encode(record))
            // A start time past `Int`'s range is left to `JSONDecoder`, never read wrong.
            if (record.pidStartTime ?? 0) > UInt64(Int.max) {
                #expect(Self.read(written, RecordJSON.decodeAttempt) == nil)
                #expect(Self.read(encoded, RecordJSON.decodeAttempt) == nil)
            } else {
                #expect(fieldDifferences(record, Self.read(written, RecordJSON.decodeAttempt) as Any) == [])
                #expect(fieldDifferences(record, Self.read(encoded, RecordJSON.decodeAttempt) as Any) == [])
            }
            #expect(Self.read(written, RecordJSON.hasOutcome) == (record.outcome != nil))
            #expect(Self.read(encoded, RecordJSON.hasOutcome) == (record.outcome != nil))
        }
    }

    // MARK: Runs

    static func runs(_ text: String) -> [RunRecord] {
        var full = RunRecord(
            id: text, state: .failed, startedAt: JSONFixtures.dates[5], finishedAt: JSONFixtures.dates[4],
            jobIDs: [text, "a", ""] + (0..<50).map { "job-\($0)" }, runnerPID: Int32.max,
            pipelineLimits: [text: Int.max, "b": 0, "c": Int.min])
        full.occurrenceOf = text
        full.scheduledAt = JSONFixtures.dates[7]
        full.manual = true
        let bare = RunRecord(
            id: text, state: .running, startedAt: JSONFixtures.dates[0], jobIDs: [], runnerPID: -1)
        return [full, bare]
    }

    @Test(arguments: texts) func runRecords(text: String) throws {
        for record in Self.runs(text) {
            let written = RecordJSON.encode(record)
            #expect(written == EarlierRows.run(record))
            #expect(fieldDifferences(record, try Self.decoded(RunRecord.self, written)) == [])
            #expect(fieldDifferences(record, Self.read(written, RecordJSON.decodeRun) as Any) == [])
            let encoded = Array(try JSONEncoder().encode(record))
            #expect(fieldDifferences(record, Self.read(encoded, RecordJSON.decodeRun) as Any) == [])
        }
    }

    // MARK: Records once written by JSONEncoder

    /// `JSONEncoder` writes members in a dictionary's order, a different one each time; with
    /// `.sortedKeys`, in key order, as the store now writes these records.
    static let sortedEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    static func schedules(_ text: String) -> [ScheduleRecord] {
        var full = ScheduleRecord(
            jobID: text, anchor: JSONFixtures.dates[5], lastScheduled: JSONFixtures.dates[6],
            schedule: "*/5 " + text)
        full.lastResult = .succeeded
        full.lastRunID = text
        full.nextDue = JSONFixtures.dates[7]
        full.backlog = JSONFixtures.dates
        full.queued = JSONFixtures.dates[8]
        full.triggered = [JSONFixtures.dates[8]]
        return [full, ScheduleRecord(jobID: text, anchor: JSONFixtures.dates[0], schedule: "every 1s")]
    }

    @Test(arguments: texts) func scheduleRecords(text: String) throws {
        for record in Self.schedules(text) {
            let written = RecordJSON.encode(record)
            #expect(written == Array(try Self.sortedEncoder.encode(record)))
            #expect(fieldDifferences(record, try Self.decoded(ScheduleRecord.self, written)) == [])
        }
    }

    @Test(arguments: texts) func pipelineRecords(text: String) throws {
        for record in [
            PipelineRecord(name: text, suspended: Int.max), PipelineRecord(name: text, suspended: Int.min),
        ] {
            let written = RecordJSON.encode(record)
            #expect(written == Array(try Self.sortedEncoder.encode(record)))
            #expect(fieldDifferences(record, try Self.decoded(PipelineRecord.self, written)) == [])
        }
    }

    @Test(arguments: texts) func operatorRequests(text: String) throws {
        for (index, kind) in OperatorRequest.Kind.allCases.enumerated() {
            for id in [0, 1, UInt64(Int64.max), UInt64.max] {
                let record = OperatorRequest(
                    id: id, kind: kind, jobID: text, requestedAt: JSONFixtures.dates[index])
                let written = RecordJSON.encode(record)
                #expect(written == Array(try Self.sortedEncoder.encode(record)))
                #expect(fieldDifferences(record, try Self.decoded(OperatorRequest.self, written)) == [])
            }
        }
    }

    /// Outputs are written in key order, otherwise as `JSONEncoder` wrote them.
    @Test(arguments: texts) func outputs(text: String) throws {
        let outputs = [text: text, "b": "", "a\u{1}": "/"]
        let written = RecordJSON.encode(outputs: outputs)
        #expect(fieldDifferences(outputs, try Self.decoded([String: String].self, written)) == [])
        #expect(written == Array(try Self.sortedEncoder.encode(outputs)))
    }
}
