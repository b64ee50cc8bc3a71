/// When a job runs, judged by how its needs ended (SPEC 3, key `when`).
public enum RunCondition: String, Sendable, Hashable, CaseIterable, Codable {
    /// Every need succeeded, was skipped or failed with `allowFailure`; otherwise the job is
    /// `blocked`.
    case success
    /// At least one need failed, was blocked or cancelled; otherwise the job is `skipped`.
    /// A cleanup or notification job.
    case failure
    /// Once every need is final, whatever it ended as.
    case always

    /// Whether a job with this condition waits only for its needs to be final, not to succeed:
    /// such a job is never blocked.
    public var waitsForFinalNeeds: Bool { self != .success }
}
