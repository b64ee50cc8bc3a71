import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

@testable import JobRunnerLMDB

/// The store writes job and attempt records with its own JSON writer, and reads them back with
/// the records' `Codable`; these hold the two together, field by field.
@Suite struct RecordJSONTests {
    /// Text that a writer of JSON strings can get wrong.
    static let awkward = [
        "", "plain", "quote \" and back\\slash", "\\\"\\\\\"", "new\nline\r\ttab\u{8}\u{C}",
        "\u{0}nul inside", "\u{1}\u{1F} control, \u{7F} delete", "é precomposed", "e\u{301} combining",
        "Z\u{351}\u{36B}\u{343}\u{36A}\u{302} stacked", "👩‍👩‍👧‍👦 🇸🇪 🚀 emoji", "漢字 ﷽", "\u{2028}\u{2029} separators",
        "\u{FEFF}bom", "\u{10FFFF} last scalar", "/a/b\\c",
    ]

    /// Dates at the edges: the reference date's own second, fractions, before 1970, far ahead.
    static let dates = [
        Date(timeIntervalSinceReferenceDate: 815_000_000.123_456_7), Date(timeIntervalSinceReferenceDate: 0),
        Date(timeIntervalSince1970: 0), Date(timeIntervalSinceReferenceDate: -1e-6), Date.distantPast,
        Date.distantFuture, Date(timeIntervalSinceReferenceDate: 1.0 / 3),
    ]

    /// A job record with every field set, its text from `text`.
    static func fullJob(_ text: String, state: JobState = .waiting, date: Date = dates[0]) -> JobRecord {
        var record = JobRecord(
            jobID: text, occurrence: text, pipeline: text, needs: [text, "b", ""], maxAttempts: .max,
            state: state,
            reason: state.isFinal || state == .running ? .ended(.message(text)) : .waiting(.constraint(text)),
            attempts: .max, uncountedAttempts: .min, crashedInARow: 2,
            exitCode: .min, firstStartedAt: date, startedAt: date.addingTimeInterval(0.001),
            finishedAt: Date.distantPast, nextAttemptAt: Date(timeIntervalSince1970: 0))
        record.waitingSince = date
        record.allowFailure = true
        record.when = .always
        record.logProblem = text
        return record
    }

    /// An attempt record with every field set, its text from `text`.
    static func fullAttempt(_ text: String, outcome: AttemptOutcome = .tempfail, date: Date = dates[0])
        -> AttemptRecord
    {
        AttemptRecord(
            jobID: text, occurrence: text, number: .max, outcome: outcome, startedAt: date,
            finishedAt: date.addingTimeInterval(86_400), exitCode: .max, signal: .min, reason: text,
            pid: .max, pidStartTime: .max, logPath: text, logProblem: text)
    }

    @Test(arguments: awkward) func jobRecordsDecodeAsWritten(text: String) throws {
        let full = Self.fullJob(text)
        let fields = StoredFields(of: full)
        #expect(fields.unset.isEmpty, "the fixture leaves \(fields.unset) unset: set it, so it is tested")
        // An empty occurrence is left out, as every member at its default.
        let defaulted: Set<String> = text.isEmpty ? ["occurrence"] : []
        #expect(try Set(members(RecordJSON.encode(full))) == Set(fields.names).subtracting(defaulted))
        let bare = JobRecord(jobID: text, pipeline: text, maxAttempts: nil)
        for record in [full, bare] {
            try expectSame(record, RecordJSON.encode(record), encode: RecordJSON.encode)
        }
    }

    @Test(arguments: awkward) func attemptRecordsDecodeAsWritten(text: String) throws {
        let full = Self.fullAttempt(text)
        let fields = StoredFields(of: full)
        #expect(fields.unset.isEmpty, "the fixture leaves \(fields.unset) unset: set it, so it is tested")
        #expect(try Set(members(RecordJSON.encode(full))) == Set(fields.names))
        let bare = AttemptRecord(jobID: text, number: .min, startedAt: Self.dates[0])
        for record in [full, bare] {
            try expectSame(record, RecordJSON.encode(record), encode: RecordJSON.encode)
        }
    }

    /// Every optional field left out on its own, the others set.
    @Test func eachAbsentOptionalIsLeftOutAsJSONEncoderLeavesItOut() throws {
        let job = Self.fullJob("x")
        let jobs = [
            changed(job) { $0.maxAttempts = nil }, changed(job) { $0.reason = nil },
            changed(job) { $0.exitCode = nil }, changed(job) { $0.firstStartedAt = nil },
            changed(job) { $0.startedAt = nil }, changed(job) { $0.finishedAt = nil },
            changed(job) { $0.nextAttemptAt = nil }, changed(job) { $0.waitingSince = nil },
            changed(job) { $0.logProblem = nil },
        ]
        #expect(Set(jobs.flatMap { StoredFields(of: $0).unset }).count == jobs.count)
        for record in jobs {
            try expectSame(record, RecordJSON.encode(record), encode: RecordJSON.encode)
        }
        let attempt = Self.fullAttempt("x")
        let attempts = [
            changed(attempt) { $0.outcome = nil }, changed(attempt) { $0.finishedAt = nil },
            changed(attempt) { $0.exitCode = nil }, changed(attempt) { $0.signal = nil },
            changed(attempt) { $0.reason = nil }, changed(attempt) { $0.pid = nil },
            changed(attempt) { $0.pidStartTime = nil }, changed(attempt) { $0.logPath = nil },
            changed(attempt) { $0.logProblem = nil },
        ]
        #expect(Set(attempts.flatMap { StoredFields(of: $0).unset }).count == attempts.count)
        for record in attempts {
            try expectSame(record, RecordJSON.encode(record), encode: RecordJSON.encode)
        }
    }

    @Test(arguments: dates) func datesDecodeAsWritten(date: Date) throws {
        let job = Self.fullJob("d", date: date)
        try expectSame(job, RecordJSON.encode(job), encode: RecordJSON.encode)
        let attempt = Self.fullAttempt("d", date: date)
        try expectSame(attempt, RecordJSON.encode(attempt), encode: RecordJSON.encode)
    }

    @Test func everyStateAndOutcomeDecodesAsWritten() throws {
        for state in JobState.allCases {
            let record = Self.fullJob("s", state: state)
            try expectSame(record, RecordJSON.encode(record), encode: RecordJSON.encode)
        }
        for outcome in AttemptOutcome.allCases {
            let record = Self.fullAttempt("o", outcome: outcome)
            try expectSame(record, RecordJSON.encode(record), encode: RecordJSON.encode)
        }
    }

    /// `bytes` decode to `record`, scalar for scalar, and to what `JSONEncoder`'s bytes decode to.
    private func expectSame<Record: Codable & Equatable>(
        _ record: Record, _ bytes: [UInt8], encode: (Record) -> [UInt8],
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws {
        let decoded = try JSONDecoder().decode(Record.self, from: Data(bytes))
        #expect(decoded == record, sourceLocation: sourceLocation)
        // String equality is canonical equivalence ("é" == "e\u{301}"); the same bytes again mean
        // the very same scalars came back.
        #expect(encode(decoded) == bytes, sourceLocation: sourceLocation)
        let viaEncoder = try JSONDecoder().decode(Record.self, from: JSONEncoder().encode(record))
        #expect(encode(viaEncoder) == bytes, sourceLocation: sourceLocation)
    }

    /// A copy of `record` with `change` made.
    private func changed<Record>(_ record: Record, _ change: (inout Record) -> Void) -> Record {
        var copy = record
        change(&copy)
        return copy
    }

    /// The names of the members of the JSON object in `bytes`.
    private func members(_ bytes: [UInt8]) throws -> [String] {
        let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        return object.map { Array($0.keys) } ?? []
    }
}
