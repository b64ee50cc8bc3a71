import Foundation

/// An operator's request about one job of a run (`jobrunner retry|skip|cancel JOB`), stored so
/// that a live runner in another process picks it up, applies it and deletes it.
public struct OperatorRequest: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// A failed, blocked or cancelled job, and the jobs it blocked, get another chance.
        case retry
        /// The job is marked `skipped`; the jobs that need it may go on.
        case skip
        /// A running attempt's process group is terminated; the job is `cancelled`.
        case cancel
    }

    /// Unique within the run and increasing: requests apply in the order they were made.
    public var id: UInt64
    public var kind: Kind
    public var jobID: String
    public var requestedAt: Date

    public init(id: UInt64, kind: Kind, jobID: String, requestedAt: Date) {
        self.id = id
        self.kind = kind
        self.jobID = jobID
        self.requestedAt = requestedAt
    }
}
