import Foundation
import JobRunnerCore
import JobRunnerJSON

extension RecordJSON {
    /// A stored job record read as far as resuming its run needs (``JobProgress``): the members
    /// of the job's definition are checked for their shape and not kept. Nil when the record is
    /// not as ``RecordJSON`` writes it, exactly when ``decodeJob(_:)`` answers nil: the caller
    /// reads it whole.
    static func decodeJobProgress(_ bytes: UnsafeRawBufferPointer) -> JobProgress? {
        var reader = JSONReader(bytes)
        var jobID: String?
        var occurrence = ""
        var hasPipeline = false
        var state: JobState?
        var reasonWords: String?
        var attempts: Int?
        var progress = JobProgress(jobID: "", state: .pending)
        let read = reader.object(JobMember.names) { name, reader in
            switch name {
            case .jobID: jobID = reader.string()
            case .occurrence: occurrence = reader.string() ?? ""
            case .pipeline: hasPipeline = reader.skipString()
            case .needs: return reader.skipStrings()
            case .maxAttempts: _ = reader.integer()
            case .state: state = reader.string().flatMap(JobState.init(rawValue:))
            case .reason: reasonWords = reader.string()
            case .attempts: attempts = reader.integer()
            case .uncountedAttempts: progress.uncountedAttempts = reader.integer() ?? 0
            case .crashedInARow: progress.crashedInARow = reader.integer() ?? 0
            case .exitCode: progress.exitCode = reader.integer().flatMap { Int32(exactly: $0) }
            case .firstStartedAt: progress.firstStartedAt = reader.date()
            case .startedAt: progress.startedAt = reader.date()
            case .finishedAt: progress.finishedAt = reader.date()
            case .nextAttemptAt: progress.nextAttemptAt = reader.date()
            case .waitingSince: progress.waitingSince = reader.date()
            case .allowFailure: return reader.bool() != nil
            case .when: return reader.string().flatMap(RunCondition.init(rawValue:)) != nil
            case .logProblem: progress.logProblem = reader.string()
            }
            return true
        }
        guard read, reader.atEnd(), let jobID, hasPipeline, let state, let attempts else { return nil }
        progress.jobID = jobID
        progress.occurrence = occurrence
        progress.state = state
        progress.reason = reasonWords.map { JobReason(words: $0, state: state) }
        progress.attempts = attempts
        return progress
    }
}
