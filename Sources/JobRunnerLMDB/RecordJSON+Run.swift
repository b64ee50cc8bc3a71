import Foundation
import JobRunnerCore
import JobRunnerJSON

/// Reads back a stored run record without `JSONDecoder`.
///
/// A run record holds every job id of its run: `status` of a 100,000-job run spent a fifth of
/// its time in `JSONDecoder` reading them. Records of earlier versions were written by
/// `JSONEncoder` (members in any order), so this reader takes the members in any order;
/// anything else it does not read exactly as `JSONDecoder` would (a member it does not know, one
/// given twice, a value of another shape) makes it answer nil, and the caller falls back to
/// `JSONDecoder`.
extension RecordJSON {
    static func decodeRun(_ bytes: UnsafeRawBufferPointer) -> RunRecord? {
        var reader = JSONReader(bytes)
        var id: String?
        var state: RunState?
        var startedAt: Date?
        var finishedAt: Date?
        var jobIDs: [String]?
        var runnerPID: Int32?
        var limits: [String: Int]?
        var occurrenceOf: String?
        var scheduledAt: Date?
        var manual: Bool?
        // `null` is an absent optional; for a required member, the fallback says what is wrong.
        let read = reader.object(RunMember.names) { name, reader in
            switch name {
            case .id: id = reader.string()
            case .state: state = reader.string().flatMap(RunState.init(rawValue:))
            case .startedAt: startedAt = reader.date()
            case .finishedAt: finishedAt = reader.date()
            case .jobIDs: jobIDs = reader.strings()
            case .runnerPID: runnerPID = reader.integer().flatMap { Int32(exactly: $0) }
            case .pipelineLimits: limits = reader.map { $0.integer() }
            case .occurrenceOf: occurrenceOf = reader.string()
            case .scheduledAt: scheduledAt = reader.date()
            case .manual: manual = reader.bool()
            }
            return true
        }
        guard read, reader.atEnd(), let id, let state, let startedAt, let jobIDs, let runnerPID, let limits
        else {
            return nil
        }
        var run = RunRecord(
            id: id, state: state, startedAt: startedAt, finishedAt: finishedAt, jobIDs: jobIDs,
            runnerPID: runnerPID, pipelineLimits: limits)
        run.occurrenceOf = occurrenceOf
        run.scheduledAt = scheduledAt
        run.manual = manual
        return run
    }
}

/// The members of a stored run record, named as `RunRecord`'s synthesized `Codable` names them.
private enum RunMember: CaseIterable {
    case id, state, startedAt, finishedAt, jobIDs, runnerPID, pipelineLimits, occurrenceOf, scheduledAt,
        manual

    static let names = JSONMembers<RunMember>()
}
