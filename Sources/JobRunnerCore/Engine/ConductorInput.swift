import Foundation

/// What happened, told to the ``Conductor``: the only way its state changes.
public enum ConductorInput: Sendable {
    /// An input for the scheduler of one run (an attempt's spawn or end, a constraint check,
    /// operator requests read from the store). An input of a run already closed goes nowhere.
    case run(String, SchedulerInput)
    /// The connectivity probe a run asked for answered: every run learns the answer, and the
    /// run that asked judges its held failures on it (SPEC 5.5).
    case probed(runID: String, online: Bool)
    /// The periodic connectivity probe answered: every run learns it.
    case connectivity(online: Bool)
    /// An input for every run (a broadcast other than connectivity).
    case everyRun(SchedulerInput)
    /// A constraint's `satisfy` ended: every run waiting for it is told (SPEC 5.6).
    case satisfyEnded(constraint: String, SatisfyOutcome)
    /// The requests about periodic jobs as the store holds them now (SPEC 5.12): `trigger`, and
    /// `retry`, `skip` or `cancel` of an occurrence, with the stored snapshots of the finished
    /// occurrence runs they name. Each is taken once and deleted in the commit that records what
    /// became of it.
    case periodicRequests([OperatorRequest], finished: [String: RunSnapshot])
    /// A `notify:` hook's delivery ended: `failure` nil, it succeeded; else why it failed (after
    /// its attempts). One a stop `interrupted` stays stored, for the next runner.
    case notified(OperatorRequest, failure: String?, interrupted: Bool)
    /// The pipelines' suspend counts as the store holds them now.
    case suspensions([String: Int])
    /// Time passed: backoff delays and the timetable's dates may have come.
    case tick
    /// New definitions (`serve` reloading its files) and the periodic jobs among them.
    case reload(Workload, [Timetable.Job])
    /// The runner stops cleanly: nothing new starts; occurrences held for their needs become
    /// runs for the next runner to resume.
    case stop
    /// An attempt decided before a stop (or whose job a reload removed) that was never begun.
    case notStarted(AttemptOrder)
}

/// The settings of a ``Conductor``.
public struct ConductorOptions: Sendable {
    /// Keep scheduling periodic jobs (`serve`); otherwise the work is done once every one-shot
    /// job and every occurrence that was due is final (`run`).
    public var serve: Bool
    /// Recorded in the runs it makes.
    public var runnerPID: Int32
    /// The settings of each run's scheduler.
    public var scheduler: SchedulerOptions
    /// At most this many occurrence runs under way at once; the occurrences due beyond it wait,
    /// in the order they fell due, for one to close (nil: no limit). Each run under way costs
    /// its scheduler and its attempt's task; 10,000 jobs falling due together would otherwise
    /// all be made at once.
    public var maxOccurrenceRuns: Int?

    /// The limit a runner uses: more occurrences at once than children it may start (see the
    /// shell's `ChildSlots`) would only wait there, holding their memory.
    public static let defaultMaxOccurrenceRuns = 1024

    public init(
        serve: Bool, runnerPID: Int32, scheduler: SchedulerOptions, maxOccurrenceRuns: Int? = nil
    ) {
        self.serve = serve
        self.runnerPID = runnerPID
        self.scheduler = scheduler
        self.maxOccurrenceRuns = maxOccurrenceRuns.map { max(1, $0) }
    }
}
