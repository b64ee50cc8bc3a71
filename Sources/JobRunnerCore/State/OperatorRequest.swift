import Foundation

/// An operator's request about one job of a run (`jobrunner retry|skip|cancel JOB`), or for an
/// occurrence of a periodic job now (`jobrunner trigger JOB`), stored so that a live runner in
/// another process picks it up, applies it and deletes it.
public struct OperatorRequest: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// A failed, blocked or cancelled job, and the jobs it blocked, get another chance.
        case retry
        /// The job is marked `skipped`; the jobs that need it may go on.
        case skip
        /// A running attempt's process group is terminated; the job is `cancelled`.
        case cancel
        /// An occurrence of a periodic job starts now, outside its schedule (SPEC 5.12). Stored
        /// under ``OperatorRequest/periodicRequests``, not under a run: it makes one.
        case trigger
        /// Not an operator's: a `notify:` hook that fell due (SPEC 5.13), `jobID` the hook's name
        /// and `runID` the finished run; stored under ``OperatorRequest/notifyRequests`` in the
        /// commit that finishes the run, deleted once delivered.
        case notify
    }

    /// Where due `notify:` hooks are stored: every runner reads them when it starts and delivers
    /// them.
    public static let notifyRequests = "notify"

    /// Where `trigger` requests, and the requests about periodic jobs' occurrences, are stored in
    /// place of a run id: every runner (`serve` or `run`) reads them, at its start and at each
    /// look at the store, whether the occurrence is under way or finished.
    public static let periodicRequests = "periodic"

    /// Unique within the run and increasing: requests apply in the order they were made.
    public var id: UInt64
    public var kind: Kind
    public var jobID: String
    public var requestedAt: Date
    /// For a `retry`, `skip` or `cancel` of a periodic job's occurrence, stored under
    /// ``periodicRequests`` (the runner reads only its runs under way, and a finished
    /// occurrence is none): the occurrence's run. Nil otherwise.
    public var runID: String?

    public init(id: UInt64, kind: Kind, jobID: String, requestedAt: Date, runID: String? = nil) {
        self.id = id
        self.kind = kind
        self.jobID = jobID
        self.requestedAt = requestedAt
        self.runID = runID
    }
}
