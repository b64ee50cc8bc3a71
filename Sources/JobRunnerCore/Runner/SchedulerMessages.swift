import Foundation

/// What happened, told to the ``Scheduler``: the only way its state changes.
public enum SchedulerInput: Sendable, Hashable {
    /// An attempt's process exists: its pid, and the pid's start time that tells a reused pid apart.
    case attemptSpawned(jobID: String, attempt: Int, pid: Int32, pidStartTime: UInt64?)
    /// An attempt ended, as its handler saw it.
    case attemptEnded(jobID: String, attempt: Int, AttemptResult)
    /// Operators' `retry`, `skip` or `cancel`, oldest first; `stored` when they were read from
    /// the store, which then deletes them. A request seen before is not applied again.
    case operatorRequests([OperatorRequest], stored: Bool)
    /// The pipelines' persisted suspend counts, as last read.
    case suspensions([String: Int])
    /// Time passed: backoff delays that have run out let their jobs go on.
    case tick
    /// What the periodic connectivity probe said (SPEC 5.5). It may have started before a
    /// failed attempt held for a probe ended, so it judges none of them.
    case connectivity(online: Bool)
    /// What the probe this run asked for (``Effect/probeConnectivity(runID:)``) said: it started
    /// after the failed attempts held when it was asked, which are judged on it, even when the
    /// answer did not change.
    case probed(online: Bool)
    /// The `check`s of a job's constraints ran: `failed` names the first that did not hold.
    case constraintsChecked(jobID: String, failed: String?)
    /// A constraint's `satisfy` ended (SPEC 5.6).
    case satisfyEnded(constraint: String, SatisfyOutcome)
    /// The runner that worked on this run died: its running attempts are over (SPEC 5.9).
    case runnerDied
    /// What the other runs of the runner hold of the pipelines' slots (SPEC 5.3): they share
    /// each `maxConcurrent` and `--jobs`. Ready jobs start if the slots that are left allow.
    case slotsElsewhere(SlotsTaken)
    /// The next occurrence of the job replaces this run's (`overlap: replace`): a running
    /// attempt is ended, and the job ends `cancelled`, replaced.
    case replaced(jobID: String)
    /// The runner stops cleanly: nothing new starts; the attempts that end now are interrupted,
    /// not failed, and wait for the next run.
    case stop
}

/// Something to do once the changes decided with it are durable, in the order given.
public enum Effect: Sendable, Hashable {
    /// Report a transition.
    case emit(RunEvent)
    /// Report every job of a new run as `queued` (or `skipped` when disabled), in load order.
    case emitNewJobs(NewJobRecords)
    /// Run an attempt; its spawn and its end come back as inputs.
    case startAttempt(AttemptOrder)
    /// Run the `check` of each named constraint of a job of run `runID`, in order, until one fails.
    case checkConstraints(runID: String, jobID: String, constraints: [String])
    /// Run a constraint's `satisfy` for the jobs of run `runID` that wait on it.
    case satisfy(runID: String, constraint: String)
    /// End a running attempt now (an operator cancelled or skipped its job); its end comes back
    /// as `attemptEnded`.
    case endAttempt(runID: String, jobID: String, attempt: Int, pid: Int32?, pidStartTime: UInt64?)
    /// Say that occurrences of a periodic job were missed while no runner was up and are not
    /// run (`catchUp`), in one line for the job (SPEC 5.12): they are recorded `missed`, with no
    /// event of their own.
    case reportMissed(jobID: String, count: Int, catchUp: CatchUp)
    /// Deliver a due `notify:` hook (SPEC 5.13); its end comes back as
    /// ``ConductorInput/notified(_:failure:)``.
    case notify(OperatorRequest)
    /// Delete the log directories of runs whose records were pruned (`retention:`).
    case removeLogs(runIDs: [String])
    /// Run the connectivity probe now and send its answer as `probed` to run `runID` (and as
    /// `connectivity` to every run): an attempt of a job that needs the internet failed, and
    /// whether it counts depends on the answer (SPEC 5.5).
    case probeConnectivity(runID: String)
}

/// What an attempt to start needs from the scheduler.
public struct AttemptOrder: Sendable, Hashable {
    public var runID: String
    public var jobID: String
    public var attempt: Int
    /// Where its output goes.
    public var logPath: String
    /// Outputs of the jobs it needs, by job id.
    public var neededOutputs: [String: [String: String]]
}

/// An operator request's fate.
public struct OperatorAnswer: Sendable, Hashable {
    public var request: OperatorRequest
    public var result: OperatorResult

    public init(request: OperatorRequest, result: OperatorResult) {
        self.request = request
        self.result = result
    }
}

/// What an operator request did.
public enum OperatorResult: Sendable, Hashable {
    /// Applied; the words say what happened.
    case applied(String)
    /// Applied in part: the job's running attempt is being ended first.
    case terminating(jobID: String)
    /// Not applicable to the job as it stands; the words say why.
    case refused(String)
}

/// The scheduler's answer to an input: the changes to commit, in one batch, and what to do
/// once they are durable. Nothing in `effects` may happen before `changes` are committed.
public struct Decision: Sendable {
    public var changes: [StoreChange] = []
    public var effects: [Effect] = []
    /// Answers to operator requests taken with this input.
    public var answers: [OperatorAnswer] = []

    public init() {}

    public var isEmpty: Bool { changes.isEmpty && effects.isEmpty && answers.isEmpty }

    /// Appends another decision, keeping order.
    public mutating func append(_ other: Decision) {
        changes.append(contentsOf: other.changes)
        effects.append(contentsOf: other.effects)
        answers.append(contentsOf: other.answers)
    }

    /// What the commit of ``changes`` keeps among its committed events besides: the events it
    /// reports (a new run's `queued` events come as one `jobs-opened`, made from its jobs'
    /// records), masked as `--events` writes them, and the answers to operator requests.
    public func reports(masking secrets: Secrets?) -> [StoreChange] {
        var reports: [StoreChange] = []
        var events: [RunEvent] = []
        for case .emit(let event) in effects { events.append(event) }
        if !events.isEmpty {
            if let masker = secrets?.masker, !masker.isEmpty {
                events = events.map { MaskingObserver.masked($0, with: masker) }
            }
            reports.append(.recordEvents(events))
        }
        if !answers.isEmpty { reports.append(.recordAnswers(answers)) }
        return reports
    }

    /// The events among the effects, in order.
    public var events: [RunEvent] {
        effects.flatMap { effect -> [RunEvent] in
            switch effect {
            case .emit(let event): [event]
            case .emitNewJobs(let jobs): Array(jobs.events)
            default: []
            }
        }
    }
}

/// The scheduler's settings for one run.
public struct SchedulerOptions: Sendable {
    /// Global cap on running attempts (`--jobs N`); nil: only pipeline limits.
    public var maxRunning: Int?
    /// Attempt logs go to `<logDirectory>/<run>/<job>/<attempt>.log`.
    public var logDirectory: String
    /// The log directory as attempt records store it: relative to the state directory (`logs`),
    /// so a state directory that is moved keeps its logs; `logDirectory` when nil.
    public var storedLogDirectory: String

    public init(maxRunning: Int? = nil, logDirectory: String, storedLogDirectory: String? = nil) {
        self.storedLogDirectory = storedLogDirectory ?? logDirectory
        self.maxRunning = maxRunning
        self.logDirectory = logDirectory
    }
}
