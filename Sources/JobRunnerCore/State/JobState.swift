/// Where a job stands in a run (SPEC 5.1).
public enum JobState: String, Sendable, Hashable, Codable, CaseIterable {
    case pending, waiting, running, succeeded, failed, skipped, blocked, cancelled

    /// A final state never changes again within the run.
    public var isFinal: Bool {
        switch self {
        case .pending, .waiting, .running: return false
        case .succeeded, .failed, .skipped, .blocked, .cancelled: return true
        }
    }

    /// Final states that let the jobs that need this one go on.
    public var satisfiesNeeds: Bool { self == .succeeded || self == .skipped }
}

/// How one finished attempt ended (SPEC 5.1).
public enum AttemptOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    case succeeded, failed, timeout, tempfail, skipped, interrupted
}

/// Where a run stands.
public enum RunState: String, Sendable, Hashable, Codable {
    /// A runner works on it, or died while it did (then the next `run` resumes it).
    case running
    /// Stopped cleanly by a signal; the next `run` resumes it.
    case stopped
    /// Every job succeeded or was skipped.
    case succeeded
    /// Every job is final and at least one failed, was blocked or cancelled.
    case failed
    /// An occurrence that came due while the last one ran, skipped (`overlap: skip`).
    case skipped
    /// An occurrence missed while no runner was there and not caught up (`catchUp`).
    case missed

    public var isFinal: Bool { self != .running && self != .stopped }
}
