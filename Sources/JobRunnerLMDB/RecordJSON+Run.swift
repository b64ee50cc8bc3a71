import Foundation
import JobRunnerCore

/// Reads back a stored run record without `JSONDecoder`.
///
/// A run record holds every job id of its run: `status` of a 100,000-job run spent a fifth of
/// its time in `JSONDecoder` reading them. The record is written by `JSONEncoder` (members in
/// any order), so this reader takes the members in any order; anything else it does not read
/// exactly as `JSONDecoder` would (a member it does not know, one given twice, a value of
/// another shape) makes it answer nil, and the caller falls back to `JSONDecoder`.
extension RecordJSON {
    static func decodeRun(_ bytes: UnsafeRawBufferPointer) -> RunRecord? {
        var reader = FlatJSONReader(bytes)
        var id: String?
        var state: RunState?
        var startedAt: Date?
        var finishedAt: Date?
        var jobIDs: [String]?
        var runnerPID: Int32?
        var limits: [String: Int]?
        var occurrenceOf: String?
        var scheduledAt: Date?
        var seen = Set<RunMember>()
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var first = true
        var next = 0
        while !reader.take(UInt8(ascii: "}")) {
            if !first { guard reader.take(UInt8(ascii: ",")) else { return nil } }
            first = false
            guard let name: RunMember = reader.member(expecting: &next), reader.take(UInt8(ascii: ":")),
                seen.insert(name).inserted
            else { return nil }
            // `null` is an absent optional; for a required member, the fallback says what is wrong.
            if reader.takeNull() { continue }
            switch name {
            case .id: id = reader.string()
            case .state: state = reader.string().flatMap(RunState.init(rawValue:))
            case .startedAt: startedAt = reader.date()
            case .finishedAt: finishedAt = reader.date()
            case .jobIDs: jobIDs = reader.strings()
            case .runnerPID: runnerPID = reader.integer().flatMap { Int32(exactly: $0) }
            case .pipelineLimits: limits = reader.integers()
            case .occurrenceOf: occurrenceOf = reader.string()
            case .scheduledAt: scheduledAt = reader.date()
            }
            if reader.failed { return nil }
        }
        guard reader.atEnd(), let id, let state, let startedAt, let jobIDs, let runnerPID, let limits else {
            return nil
        }
        var run = RunRecord(
            id: id, state: state, startedAt: startedAt, finishedAt: finishedAt, jobIDs: jobIDs,
            runnerPID: runnerPID, pipelineLimits: limits)
        run.occurrenceOf = occurrenceOf
        run.scheduledAt = scheduledAt
        return run
    }
}

/// The members of a stored run record, named as `RunRecord`'s synthesized `Codable` names them.
enum RunMember: CaseIterable, StoredMember {
    case id, state, startedAt, finishedAt, jobIDs, runnerPID, pipelineLimits, occurrenceOf, scheduledAt

    static let names: [(utf8: [UInt8], member: RunMember)] = allCases.map {
        (Array(String(describing: $0).utf8), $0)
    }
}

extension FlatJSONReader {
    /// An object of integers, such as a run's pipeline limits; nil for a name given twice.
    mutating func integers() -> [String: Int]? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var values: [String: Int] = [:]
        if take(UInt8(ascii: "}")) { return values }
        repeat {
            guard let name = string(), take(UInt8(ascii: ":")), let value = integer(), values[name] == nil
            else { return nil }
            values[name] = value
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}")) ? values : nil
    }
}
