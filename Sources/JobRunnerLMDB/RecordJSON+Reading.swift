import Foundation
import JobRunnerCore
import JobRunnerJSON

/// Reads back the job and attempt records ``RecordJSON`` writes, without `JSONDecoder`.
///
/// `status --json` of a 100,000-job run decodes every job record; through `JSONDecoder` that
/// alone took over a second. The stored JSON is flat: strings, numbers, `null` and one array of
/// strings. Anything ``JSONReader`` does not read, or reads otherwise than these records hold
/// (a member it does not know, one given twice, a value of another shape), makes it answer nil,
/// and the caller falls back to `JSONDecoder`, which reads every version of the record or says
/// why it cannot.
extension RecordJSON {
    private static let stateMember = Array(#","state":""#.utf8)

    /// A stored job record's state, found in its bytes without reading the rest; nil when the
    /// record is not as ``RecordJSON`` writes it.
    ///
    /// `,"state":"` cannot occur inside a string value, where every quote is escaped, so its
    /// first occurrence is the member.
    static func state(in bytes: UnsafeRawBufferPointer) -> JobState? {
        stateMember.withUnsafeBytes { member in
            guard let base = bytes.baseAddress, let pattern = member.baseAddress, bytes.count > member.count
            else { return nil }
            let end = base + bytes.count
            // From comma to comma (memchr), comparing the member's bytes at each.
            var next = base
            while let comma = memchr(next, Int32(UInt8(ascii: ",")), next.distance(to: end)) {
                let at = UnsafeRawPointer(comma)
                if at.distance(to: end) < member.count { return nil }
                if memcmp(at, pattern, member.count) == 0 {
                    let start = base.distance(to: at) + member.count
                    guard let close = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                    return jobState(named: UnsafeRawBufferPointer(rebasing: bytes[start..<close]))
                }
                next = at + 1
            }
            return nil
        }
    }

    /// The state stored as `name`, matched without making a `String`.
    static func jobState(named name: UnsafeRawBufferPointer) -> JobState? {
        stateNames.first { $0.utf8.elementsEqual(name) }?.state
    }

    /// Each state's stored name.
    private static let stateNames = JobState.allCases.map { (utf8: Array($0.rawValue.utf8), state: $0) }

    static func decodeJob(_ bytes: UnsafeRawBufferPointer) -> JobRecord? {
        var reader = JSONReader(bytes)
        var jobID: String?
        var occurrence = ""
        var pipeline: String?
        var needs: [String] = []
        var maxAttempts: Int?
        var state: JobState?
        var reasonWords: String?
        var attempts: Int?
        var uncounted = 0
        var crashed = 0
        var exitCode: Int32?
        var firstStartedAt: Date?
        var startedAt: Date?
        var finishedAt: Date?
        var nextAttemptAt: Date?
        var waitingSince: Date?
        var allowFailure = false
        var when = RunCondition.success
        var logProblem: String?
        let read = reader.object(JobMember.names) { name, reader in
            switch name {
            case .jobID: jobID = reader.string()
            case .occurrence: occurrence = reader.string() ?? ""
            case .pipeline: pipeline = reader.string()
            case .needs:
                guard let values = reader.strings() else { return false }
                needs = values
            case .maxAttempts: maxAttempts = reader.integer()
            case .state: state = reader.string().flatMap(JobState.init(rawValue:))
            case .reason: reasonWords = reader.string()
            case .attempts: attempts = reader.integer()
            case .uncountedAttempts: uncounted = reader.integer() ?? 0
            case .crashedInARow: crashed = reader.integer() ?? 0
            case .exitCode: exitCode = reader.integer().flatMap { Int32(exactly: $0) }
            case .firstStartedAt: firstStartedAt = reader.date()
            case .startedAt: startedAt = reader.date()
            case .finishedAt: finishedAt = reader.date()
            case .nextAttemptAt: nextAttemptAt = reader.date()
            case .waitingSince: waitingSince = reader.date()
            case .allowFailure:
                guard let value = reader.bool() else { return false }
                allowFailure = value
            case .when:
                guard let value = reader.string().flatMap(RunCondition.init(rawValue:)) else { return false }
                when = value
            case .logProblem: logProblem = reader.string()
            }
            return true
        }
        guard read, reader.atEnd(), let jobID, let pipeline, let state, let attempts else { return nil }
        var record = JobRecord(
            jobID: jobID, occurrence: occurrence, pipeline: pipeline, needs: needs, maxAttempts: maxAttempts,
            state: state, reason: reasonWords.map { JobReason(words: $0, state: state) }, attempts: attempts,
            uncountedAttempts: uncounted, crashedInARow: crashed, exitCode: exitCode,
            firstStartedAt: firstStartedAt, startedAt: startedAt, finishedAt: finishedAt,
            nextAttemptAt: nextAttemptAt)
        record.waitingSince = waitingSince
        record.allowFailure = allowFailure
        record.when = when
        record.logProblem = logProblem
        return record
    }
}

extension RecordJSON {
    /// A stored attempt record, or nil when it is not as ``RecordJSON`` writes it (the caller
    /// falls back to `JSONDecoder`). Resuming a run reads every attempt of it.
    static func decodeAttempt(_ bytes: UnsafeRawBufferPointer) -> AttemptRecord? {
        var reader = JSONReader(bytes)
        var jobID: String?
        var occurrence = ""
        var number: Int?
        var outcome: AttemptOutcome?
        var startedAt: Date?
        var finishedAt: Date?
        var exitCode: Int32?
        var signal: Int32?
        var reason: String?
        var pid: Int32?
        var pidStartTime: UInt64?
        var logPath: String?
        var logProblem: String?
        let read = reader.object(AttemptMember.names) { name, reader in
            switch name {
            case .jobID: jobID = reader.string()
            case .occurrence: occurrence = reader.string() ?? ""
            case .number: number = reader.integer()
            case .outcome:
                guard let value = reader.string().flatMap(AttemptOutcome.init(rawValue:)) else {
                    return false
                }
                outcome = value
            case .startedAt: startedAt = reader.date()
            case .finishedAt: finishedAt = reader.date()
            case .exitCode: exitCode = reader.integer().flatMap { Int32(exactly: $0) }
            case .signal: signal = reader.integer().flatMap { Int32(exactly: $0) }
            case .reason: reason = reader.string()
            case .pid: pid = reader.integer().flatMap { Int32(exactly: $0) }
            case .pidStartTime:
                guard let value = reader.integer().flatMap({ UInt64(exactly: $0) }) else { return false }
                pidStartTime = value
            case .logPath: logPath = reader.string()
            case .logProblem: logProblem = reader.string()
            }
            return true
        }
        guard read, reader.atEnd(), let jobID, let number, let startedAt else { return nil }
        return AttemptRecord(
            jobID: jobID, occurrence: occurrence, number: number, outcome: outcome, startedAt: startedAt,
            finishedAt: finishedAt, exitCode: exitCode, signal: signal, reason: reason, pid: pid,
            pidStartTime: pidStartTime, logPath: logPath, logProblem: logProblem)
    }
}

extension RecordJSON {
    private static let outcomeMember = Array(#""outcome":""#.utf8)

    /// Whether a stored attempt record shows an outcome in its bytes, found without reading the
    /// rest. True for a record as ``RecordJSON`` or `JSONEncoder` writes one with an outcome
    /// (nil members are left out); false means none was found, and the caller reads the record.
    ///
    /// `"outcome":"` cannot occur inside a string value, where every quote is escaped; after a
    /// `{` or a `,` it is the member.
    static func hasOutcome(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let member = outcomeMember
        guard bytes.count > member.count else { return false }
        for index in 1...(bytes.count - member.count)
        where bytes[index] == member[0] && bytes[index + 1] == member[1]
            && (bytes[index - 1] == UInt8(ascii: ",") || bytes[index - 1] == UInt8(ascii: "{"))
            && member.indices.allSatisfy({ bytes[index + $0] == member[$0] })
        {
            return true
        }
        return false
    }
}

/// The members of a stored attempt record, in the order `RecordJSON.encode` writes them.
private enum AttemptMember: CaseIterable {
    case jobID, occurrence, number, outcome, startedAt, finishedAt, exitCode, signal, reason, pid
    case pidStartTime, logPath, logProblem

    static let names = JSONMembers<AttemptMember>()
}

/// The members of a stored job record, in the order `RecordJSON.encode` writes them; each
/// case is named as its member.
enum JobMember: CaseIterable {
    case jobID, occurrence, pipeline, needs, maxAttempts, state, reason, attempts, uncountedAttempts
    case crashedInARow, exitCode, firstStartedAt, startedAt, finishedAt, nextAttemptAt, waitingSince
    case allowFailure, when, logProblem

    static let names = JSONMembers<JobMember>()
}
