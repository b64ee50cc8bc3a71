import Foundation

/// One line of `--events` (SPEC 5.10), emitted only after the change it reports is durable.
public struct RunEvent: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case queued, waiting, started, succeeded, failed, retrying, skipped, blocked, cancelled
        case interrupted, disabled, suspended, resumed, output
        case runFinished = "run-finished"
        case notifyStarted = "notify-started"
        case notifySucceeded = "notify-succeeded"
        case notifyFailed = "notify-failed"
    }

    public var time: Date
    public var run: String
    public var job: String?
    public var attempt: Int?
    public var kind: Kind
    public var reason: String?
    public var exitCode: Int32?
    public var delay: Duration?
    public var key: String?
    public var value: String?
    public var state: String?
    public var pipeline: String?
    /// For an event of a periodic job's occurrence: its scheduled date, so a line names the
    /// occurrence (`tick @ 19:07:15`, SPEC 5.12).
    public var occurrence: Date?
    /// For `notify-*` events: the hook's name.
    public var hook: String?

    public init(
        time: Date, run: String, job: String? = nil, attempt: Int? = nil, kind: Kind,
        reason: String? = nil, exitCode: Int32? = nil, delay: Duration? = nil, key: String? = nil,
        value: String? = nil, state: String? = nil, pipeline: String? = nil, occurrence: Date? = nil,
        hook: String? = nil
    ) {
        self.hook = hook
        self.occurrence = occurrence
        self.time = time
        self.run = run
        self.job = job
        self.attempt = attempt
        self.kind = kind
        self.reason = reason
        self.exitCode = exitCode
        self.delay = delay
        self.key = key
        self.value = value
        self.state = state
        self.pipeline = pipeline
    }
}

/// Receives events in commit order: the events file, the progress display, tests.
///
/// An observer that writes may keep what it was given and write it in one go on ``flush()``:
/// the runner calls it once it has handled a batch of messages, before it waits for the next,
/// and before `run` returns or throws. (Two `write`s per job were a tenth of the runner's
/// loop in a run of quick jobs.)
public protocol RunObserver: Sendable {
    /// The run of one-shot jobs the runner works on, told once before any event of it: a
    /// resumed run says so on the first line of the progress (SPEC 5.9). The default does
    /// nothing.
    func opened(_ run: OpenedRun)
    func record(_ event: RunEvent)
    /// Occurrences of a periodic job missed while no runner was up and not run (`catchUp`),
    /// said in one line per job (SPEC 5.12). The default does nothing.
    func missed(jobID: String, count: Int, catchUp: CatchUp, time: Date)
    /// Writes out what was recorded and not written yet, in order. The default does nothing.
    func flush()
}

extension RunObserver {
    public func opened(_ run: OpenedRun) {}
    public func missed(jobID: String, count: Int, catchUp: CatchUp, time: Date) {}
    public func flush() {}
}

/// The run a runner opened: a new one, or one it resumed with some jobs final already.
public struct OpenedRun: Sendable, Hashable {
    public var runID: String
    public var resumed: Bool
    /// Jobs of the run that were final when it was opened (none for a new run).
    public var finalJobs: Int
    public var totalJobs: Int
    public var time: Date

    public init(runID: String, resumed: Bool, finalJobs: Int, totalJobs: Int, time: Date) {
        self.runID = runID
        self.resumed = resumed
        self.finalJobs = finalJobs
        self.totalJobs = totalJobs
        self.time = time
    }
}

/// Forwards each event to several observers.
public struct ObserverList: RunObserver {
    public var observers: [any RunObserver]
    public init(_ observers: [any RunObserver]) { self.observers = observers }
    public func opened(_ run: OpenedRun) {
        for observer in observers { observer.opened(run) }
    }
    public func record(_ event: RunEvent) {
        for observer in observers { observer.record(event) }
    }
    public func missed(jobID: String, count: Int, catchUp: CatchUp, time: Date) {
        for observer in observers {
            observer.missed(jobID: jobID, count: count, catchUp: catchUp, time: time)
        }
    }
    public func flush() {
        for observer in observers { observer.flush() }
    }
}
