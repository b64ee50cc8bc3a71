import Foundation
import JobRunnerCore

/// Drives a ``Conductor`` input by input on a hand-moved date and reads what it decided, keeping
/// what a store would hold of the runs and schedule records: no runner, no store, no process.
struct ConductorDriver {
    static let origin = Date(timeIntervalSince1970: 1_800_000_000)

    private(set) var conductor: Conductor
    private(set) var now = ConductorDriver.origin
    /// What the last input decided (the opening, at first).
    private(set) var last = Decision()
    /// Every decision so far, in order.
    private(set) var history: [Decision] = []
    /// The runs as a store holds them after every decision so far.
    private(set) var runs: [String: RunRecord] = [:]
    private(set) var schedules: [String: ScheduleRecord] = [:]
    /// Outputs stored by run, then job.
    private(set) var outputs: [String: [String: [String: String]]] = [:]

    /// - Parameters:
    ///   - oneShot: the jobs of the run of one-shot jobs.
    ///   - periodic: the periodic jobs' definitions, with their timetable entries.
    init(
        oneShot: [JobDefinition] = [], periodic: [(JobDefinition, Timetable.Job)] = [],
        pipelines: [PipelineDefinition] = [], maxRunning: Int? = nil, serve: Bool = true,
        retention: RetentionPolicy = RetentionPolicy(), records: [String: ScheduleRecord] = [:],
        finished: [RunRecord] = [], unfinished: [(Occurrence, RunSnapshot)] = [], online: Bool = true,
        triggers: [OperatorRequest] = [], notify: [NotifyHook] = [], notifications: [OperatorRequest] = [],
        seed: UInt64 = 1, maxOccurrenceRuns: Int? = nil, at start: Date = ConductorDriver.origin
    ) {
        now = start
        let workload = Workload(
            jobs: oneShot + periodic.map(\.0), pipelines: pipelines, retention: retention, notify: notify)
        let plan = RunPlan(
            jobs: oneShot.map { RunPlan.Job($0, in: workload) }, pipelines: Array(workload.pipelines.values))
        let options = SchedulerOptions(maxRunning: maxRunning, logDirectory: "/logs")
        let (main, opening) = Scheduler.newRun(
            plan: plan, runID: "main", runnerPID: 1, suspended: [:], options: options,
            random: SeededRandomSource(seed: seed), inputs: online ? [] : [.connectivity(online: false)],
            now: start)
        conductor = Conductor(
            main: main, timetable: Timetable(jobs: periodic.map(\.1), records: records), workload: workload,
            online: online, finishedRuns: FinishedRuns(finished),
            options: ConductorOptions(
                serve: serve, runnerPID: 1, scheduler: options, maxOccurrenceRuns: maxOccurrenceRuns),
            random: SeededRandomSource(seed: seed &+ 99))
        for run in finished { runs[run.id] = run }
        schedules = records
        keep(opening)
        keep(
            conductor.open(resuming: unfinished, requests: triggers, notifications: notifications, now: start)
        )
        last = history.reduce(into: Decision()) { $0.append($1) }
    }

    private mutating func keep(_ decision: Decision) {
        last = decision
        history.append(decision)
        for change in decision.changes {
            switch change {
            case .putRun(let run): runs[run.id] = run
            case .deleteRun(let id): runs[id] = nil
            case .putSchedule(let record): schedules[record.jobID] = record
            case .putOutputs(let runID, let jobID, _, let values):
                outputs[runID, default: [:]][jobID] = values
            default: continue
            }
        }
    }

    /// A run asks for a constraint's `satisfy`: whether it is to start (``Conductor/joinSatisfy``).
    mutating func join(_ runID: String, _ constraint: String) -> Bool {
        conductor.joinSatisfy(runID: runID, constraint: constraint)
    }

    /// What a periodic job's occurrence receives of its needs; `read` reads a stored run.
    mutating func outputsOfNeeds(
        of job: JobDefinition, reading read: (String, String) -> [String: String]?
    ) -> [String: [String: String]] {
        conductor.outputsOfNeeds(of: job, reading: read)
    }

    // MARK: Inputs

    @discardableResult
    mutating func send(_ input: ConductorInput) -> Decision {
        keep(conductor.handle(input, now: now))
        return last
    }

    /// A `jobrunner trigger` of `jobID` asked for at `offset` (the date does not move).
    static func trigger(_ jobID: String, at offset: TimeInterval, id: UInt64 = 1) -> OperatorRequest {
        OperatorRequest(id: id, kind: .trigger, jobID: jobID, requestedAt: date(offset))
    }

    /// Moves the date to `offset` seconds after the origin and says time passed.
    mutating func advance(to offset: TimeInterval) {
        now = Self.date(offset)
        send(.tick)
    }

    /// Ends the running attempt of `jobID` in run `runID`.
    mutating func end(_ jobID: String, in runID: String = "main", _ result: AttemptResult) {
        send(.run(runID, .attemptEnded(jobID: jobID, attempt: attempt(jobID, in: runID), result)))
    }

    mutating func succeed(_ jobID: String, in runID: String = "main", outputs: [String: String] = [:]) {
        end(jobID, in: runID, AttemptResult(.succeeded, exitCode: 0, outputs: outputs))
    }

    mutating func fail(_ jobID: String, in runID: String = "main") {
        end(jobID, in: runID, .failed(exitCode: 1))
    }

    /// Ends the occurrence of `jobID` scheduled at `offset`.
    mutating func succeed(_ jobID: String, at offset: TimeInterval, outputs: [String: String] = [:]) {
        succeed(jobID, in: Self.run(jobID, offset), outputs: outputs)
    }

    mutating func fail(_ jobID: String, at offset: TimeInterval) { fail(jobID, in: Self.run(jobID, offset)) }

    // MARK: What it decided

    /// The attempt number of a job's latest attempt in a run.
    func attempt(_ jobID: String, in runID: String) -> Int {
        let scheduler = runID == conductor.main.run.id ? conductor.main : conductor.occurrenceScheduler(runID)
        return scheduler?.record(jobID)?.attempts ?? 0
    }

    /// The attempt orders of the last decision.
    var orders: [AttemptOrder] {
        last.effects.compactMap { if case .startAttempt(let order) = $0 { order } else { nil } }
    }

    /// What the last decision starts: a one-shot job by its id, an occurrence as `job@offset`.
    var started: [String] { orders.map { name($0.runID, $0.jobID) } }

    /// The attempts the last decision ends early, named as ``started``.
    var ended: [String] {
        last.effects.compactMap {
            if case .endAttempt(let runID, let jobID, _, _, _) = $0 { name(runID, jobID) } else { nil }
        }
    }

    /// `kind job` of each event of the last decision.
    var events: [String] { last.events.map { "\($0.kind.rawValue) \($0.job ?? $0.pipeline ?? "")" } }

    /// The runs the last decision deletes.
    var deleted: [String] {
        last.changes.compactMap { if case .deleteRun(let id) = $0 { id } else { nil } }
    }

    /// The occurrence runs stored for a job, by scheduled offset, with their states.
    func occurrences(of jobID: String) -> [(offset: TimeInterval, state: RunState)] {
        runs.values.filter { $0.occurrenceOf == jobID }
            .compactMap { run in run.scheduledAt.map { ($0.timeIntervalSince(Self.origin), run.state) } }
            .sorted { $0.offset < $1.offset }
    }

    /// The state of a job in an occurrence run under way.
    func state(_ jobID: String, at offset: TimeInterval) -> JobState? {
        conductor.occurrenceScheduler(Self.run(jobID, offset))?.record(jobID)?.state
    }

    func reason(_ jobID: String, at offset: TimeInterval) -> JobReason? {
        conductor.occurrenceScheduler(Self.run(jobID, offset))?.record(jobID)?.reason
    }

    /// The run id of the occurrence of `jobID` at `offset`.
    static func run(_ jobID: String, _ offset: TimeInterval) -> String {
        Conductor.runID(of: Occurrence(jobID: jobID, scheduledAt: date(offset)))
    }

    static func date(_ offset: TimeInterval) -> Date { origin.addingTimeInterval(offset) }

    private func name(_ runID: String, _ jobID: String) -> String {
        guard runID != "main" else { return jobID }
        let date = conductor.occurrence(ofRun: runID)?.scheduledAt ?? runs[runID]?.scheduledAt
        return date.map { "\(jobID)@\(Int($0.timeIntervalSince(Self.origin)))" } ?? "\(jobID)@?"
    }
}

/// A periodic job every `seconds`, with its timetable entry.
func periodicJob(
    _ id: String, every seconds: Double = 60, needs: [String] = [], pipeline: String = "default",
    catchUp: CatchUp = .latest, overlap: Overlap = .skip, retry: RetryPolicy = RetryPolicy(),
    constraints: [String] = []
) -> (JobDefinition, Timetable.Job) {
    (
        JobDefinition(
            id: id, handler: .shell("true"), pipeline: pipeline, needs: needs, constraints: constraints,
            retry: retry, catchUp: catchUp, overlap: overlap),
        everyMinute(id, catchUp: catchUp, overlap: overlap, seconds: seconds)
    )
}
