import DequeModule
import Foundation

/// The runner's decisions across runs, as a state machine: the run of one-shot jobs, one
/// ``Scheduler`` per running occurrence of a periodic job (each a run of its own), the
/// ``Timetable`` that says when occurrences start and what overlap and catch-up make of them,
/// the occurrences held for their needs, the pipeline slots the runs share, the one `satisfy`
/// per constraint they share, retention, and reloads.
///
/// It is told what happened (``ConductorInput``) and answers with a ``Decision``: the changes to
/// store and the effects to perform once they are durable. Like ``Scheduler`` it does no I/O,
/// reads no clock and draws random numbers only from the source it is given, so a test steps it
/// input by input on a hand-moved date. ``Runner`` is the shell around it that stores and acts.
public struct Conductor {
    /// An occurrence's run under way, held in a box of its own (copied on write, so a conductor
    /// stays a value): a scheduler is about 700 bytes, and a table of 10,000 of them inline
    /// (every job of a `serve` falling due together) took 12 MB, twice that while it grew.
    struct OccurrenceRun {
        private final class Box {
            let occurrence: Occurrence
            var scheduler: Scheduler

            init(_ occurrence: Occurrence, _ scheduler: Scheduler) {
                self.occurrence = occurrence
                self.scheduler = scheduler
            }
        }

        private var box: Box

        init(occurrence: Occurrence, scheduler: Scheduler) { box = Box(occurrence, scheduler) }

        var occurrence: Occurrence { box.occurrence }

        var scheduler: Scheduler {
            get { box.scheduler }
            _modify {
                if !isKnownUniquelyReferenced(&box) { box = Box(box.occurrence, box.scheduler) }
                yield &box.scheduler
            }
        }
    }

    let options: ConductorOptions
    /// The run of one-shot jobs.
    public internal(set) var main: Scheduler
    /// Whether the run of one-shot jobs was closed (it reopens when `retry` or `skip` reopens
    /// its jobs under `serve`).
    var mainClosed = false
    /// Occurrence runs under way, by run id.
    var occurrenceRuns: [String: OccurrenceRun] = [:]
    /// Occurrence runs that took an input since the last look: only they can have finished.
    /// (Looking at every run after every input cost O(n) with 10,000 occurrences at once.)
    var touched = Set<String>()
    /// The pipeline slots of the run of one-shot jobs and the occurrences, shared.
    var slots = SlotBoard()
    /// The occurrence runs waiting for a backoff delay, with its date.
    var wakes: [String: Date] = [:]
    public internal(set) var timetable: Timetable
    /// The definitions the run started with: a one-shot job that a reload removed keeps its own.
    let firstWorkload: Workload
    /// The definitions as last loaded (`serve` reloads them).
    public internal(set) var workload: Workload {
        didSet {
            occurrencePipelines = Self.pipelines(of: workload)
            pruneBatch = Self.pruneBatch(of: workload)
        }
    }
    /// How many runs close between two prunings: a tenth of the smallest number kept, the
    /// file's `retention:` or a periodic job's own, so no group holds more than a tenth more than
    /// its own limit (``pruneIfDue(now:)``).
    var pruneBatch: Int
    /// The pipelines of every occurrence's plan and their limits, made once per load and shared
    /// by them all (each plan making its own cost about 500 bytes an occurrence).
    var occurrencePipelines: (table: [String: PipelineDefinition], limits: [String: Int])
    /// Occurrences due whose needs are not final yet.
    public internal(set) var waiting: [Occurrence] = []
    /// Occurrences due while ``ConductorOptions/maxOccurrenceRuns`` runs were under way, in the
    /// order they fell due: each starts as a run closes. Their schedule records list them as
    /// waiting, so a crash or a stop loses none (the next runner starts them).
    public internal(set) var postponed = Deque<Occurrence>()
    /// The outputs of each periodic job's latest occurrence, once it succeeded: what the
    /// periodic jobs that need it receive (SPEC 5.8). Filled as occurrences end, or read from
    /// the store for one an earlier runner ran.
    var occurrenceOutputs: [String: [String: String]] = [:]
    /// Whether the machine is online, as last heard.
    public internal(set) var online: Bool
    /// Each constraint whose `satisfy` runs, with the runs waiting for it, the one that started
    /// it first: one at a time per constraint across all runs (SPEC 5.6).
    var satisfying: [String: [String]] = [:]
    /// Runs closed since retention was last applied, and when that was: reading every run
    /// record after each occurrence would cost more than the occurrence.
    var closedSincePrune = 0
    var lastPrune = Date.distantPast
    /// The finished runs retention chooses from, kept up to date as runs end.
    var finishedRuns: FinishedRuns
    /// Occurrences that ended failed (blocked included) since this conductor began: `run`
    /// exits 1.
    public internal(set) var failedOccurrences = 0
    /// Whether a stop was asked for.
    public internal(set) var stopped = false
    /// The requests about periodic jobs taken: one read twice (two looks at the store before the
    /// commit that deletes it) is applied once.
    var takenPeriodicRequests = Set<UInt64>()
    /// The `notify:` hooks being delivered (their stored requests' ids), and a counter that
    /// keeps the ids of hooks due in one millisecond apart.
    var delivering = Set<UInt64>()
    var notifySequence: UInt64 = 0
    /// Where each new occurrence's scheduler draws its jitter from: a seed taken from here.
    var random: AnyRandomSource
    /// What the input being handled decided so far.
    var decision = Decision()

    /// - Parameters:
    ///   - main: the run of one-shot jobs, opened.
    ///   - timetable: the periodic jobs and their stored schedule records.
    ///   - workload: the definitions.
    ///   - online: whether the machine was online when the runner started.
    ///   - finishedRuns: the finished runs stored, which retention chooses from.
    ///   - random: the source each occurrence's jitter is seeded from.
    public init(
        main: consuming Scheduler, timetable: Timetable, workload: Workload, online: Bool,
        finishedRuns: FinishedRuns, options: ConductorOptions, random: any RandomSource
    ) {
        self.main = main
        self.timetable = timetable
        self.firstWorkload = workload
        self.workload = workload
        self.occurrencePipelines = Self.pipelines(of: workload)
        self.pruneBatch = Self.pruneBatch(of: workload)
        self.online = online
        self.finishedRuns = finishedRuns
        self.options = options
        self.random = AnyRandomSource(random)
    }

    private static func pruneBatch(of workload: Workload) -> Int {
        var smallest = workload.retention.runs
        for job in workload.jobs { if let own = job.retention?.runs { smallest = min(smallest, own) } }
        return max(1, smallest / 10)
    }

    private static func pipelines(of workload: Workload) -> (
        table: [String: PipelineDefinition], limits: [String: Int]
    ) {
        let table = PipelineDefinition.table(Array(workload.pipelines.values))
        return (table, table.mapValues(\.maxConcurrent))
    }

    // MARK: What it is asked

    /// Whether everything is settled: nothing runs and, after a stop, nothing more starts; or,
    /// when not serving, every one-shot job and every due occurrence is final. (The shell also
    /// waits for the store and the attempts it performs.)
    public var isSettled: Bool {
        guard main.isIdle, occurrenceRuns.isEmpty || stopped else { return false }
        // `run` waits for its hooks (each within its timeout); after a stop they stay stored.
        if !stopped && !delivering.isEmpty { return false }
        guard occurrenceRuns.values.allSatisfy({ $0.scheduler.isIdle }) else { return false }
        if stopped { return true }
        return !options.serve && main.isFinished && waiting.isEmpty && postponed.isEmpty
    }

    /// When the conductor wants to be told ``ConductorInput/tick``: the earliest backoff of
    /// any run, and the timetable's next date when serving; nil after a stop.
    public var nextWakeDate: Date? {
        guard !stopped else { return nil }
        var dates = [main.nextWakeDate, wakes.values.min()]
        if options.serve { dates.append(timetable.nextWakeDate) }
        return dates.compactMap { $0 }.min()
    }

    /// A job's definition as last loaded; a one-shot job of the run that a reload removed keeps
    /// the definition it started with.
    public func definition(_ id: String) -> JobDefinition? {
        workload.job(id) ?? firstWorkload.job(id)
    }

    /// The ids of the runs under way: the run of one-shot jobs first, then the occurrences'.
    public var runIDs: [String] { [main.run.id] + occurrenceRuns.keys.sorted() }

    /// The occurrence run `runID` is, if it is one under way.
    public func occurrence(ofRun runID: String) -> Occurrence? { occurrenceRuns[runID]?.occurrence }

    /// The scheduler of an occurrence run under way.
    public func occurrenceScheduler(_ runID: String) -> Scheduler? { occurrenceRuns[runID]?.scheduler }

    /// An occurrence's run id: its scheduled date, sortable, then the job.
    public static func runID(of occurrence: Occurrence) -> String {
        Runner.compactTimestamp(occurrence.scheduledAt) + "-" + occurrence.jobID
    }

    // MARK: Inputs

    /// Resumes occurrences a dead or stopped runner left unfinished, then starts the occurrences
    /// `jobrunner trigger` asked for while no runner was there (first, SPEC 5.12), then takes what
    /// the timetable says is due now.
    public mutating func open(
        resuming unfinished: [(Occurrence, RunSnapshot)], requests: [OperatorRequest] = [],
        finished: [String: RunSnapshot] = [:], notifications: [OperatorRequest] = [], now: Date
    ) -> Decision {
        // Hooks a runner stored and did not deliver (it died or stopped): delivered now.
        for request in notifications { deliver(request, now: now) }
        for (occurrence, snapshot) in unfinished {
            guard let definition = definition(occurrence.jobID) else { continue }
            let (scheduler, resumed) = Scheduler.resume(
                snapshot, plan: occurrencePlan(definition), runnerPID: options.runnerPID,
                suspended: main.suspensions, pendingRequests: [], options: options.scheduler,
                random: nextSource(), inputs: openingInputs(snapshot.run.id), now: now)
            timetable.resumed(occurrence)
            track(snapshot.run.id, occurrence, scheduler)
            decision.append(resumed)
        }
        takePeriodicRequests(requests, finished: finished, now: now)
        tickTimetable(now: now)
        return finish(now: now)
    }

    /// Takes one input and answers with what it decided.
    public mutating func handle(_ input: ConductorInput, now: Date) -> Decision {
        switch input {
        case .run(let runID, let input):
            take([input], in: runID, now: now)
        case .probed(let runID, let value):
            online = value
            takeEverywhere([.connectivity(online: value)], now: now)
            take([.probed(online: value)], in: runID, now: now)
        case .connectivity(let value):
            online = value
            takeEverywhere([.connectivity(online: value)], now: now)
        case .everyRun(let input):
            takeEverywhere([input], now: now)
        case .satisfyEnded(let name, let outcome):
            for runID in satisfying.removeValue(forKey: name) ?? [] {
                take([.satisfyEnded(constraint: name, outcome)], in: runID, now: now)
            }
        case .notified(let request, let failure, let interrupted):
            if interrupted {
                delivering.remove(request.id)
            } else {
                notified(request, failure: failure, now: now)
            }
        case .periodicRequests(let requests, let finished):
            takePeriodicRequests(requests, finished: finished, now: now)
        case .suspensions(let counts):
            takeEverywhere([.suspensions(counts)], now: now)
        case .tick:
            takeEverywhere([.tick], now: now)
            if options.serve { tickTimetable(now: now) }
        case .reload(let reloaded, let periodic):
            workload = reloaded
            timetable.reload(periodic)
            // An occurrence held for its needs whose job is gone never runs (its definition as
            // first loaded would otherwise start it once its needs are final).
            waiting.removeAll { !timetable.contains($0.jobID) }
            postponed.removeAll { !timetable.contains($0.jobID) }
            tickTimetable(now: now)
        case .stop:
            stop(now: now)
        case .notStarted(let order):
            take(
                [
                    .attemptEnded(
                        jobID: order.jobID, attempt: order.attempt,
                        AttemptResult(.interrupted(.runnerStoppedBeforeStart)))
                ], in: order.runID, now: now)
        }
        return finish(now: now)
    }

    /// Closes what is finished, starts what that lets start, and hands over the decision.
    private mutating func finish(now: Date) -> Decision {
        closeFinishedRuns(now: now)
        let taken = decision
        decision = Decision()
        finishedRuns.note(taken.changes)
        return taken
    }

    /// Closes what a stop left open: the run of one-shot jobs if it was not closed as it
    /// finished, and the occurrence runs under way, each `stopped` (the next runner resumes
    /// them).
    public mutating func closeAll(now: Date) -> Decision {
        var closing = Decision()
        if !mainClosed {
            mainClosed = true
            closing.append(main.close(now: now))
        }
        for runID in occurrenceRuns.keys.sorted() {
            guard var entry = occurrenceRuns.removeValue(forKey: runID) else { continue }
            closing.append(entry.scheduler.close(now: now))
        }
        return closing
    }

    // MARK: Runs

    /// Hands inputs to the scheduler of a run, telling it first what the other runs hold of
    /// the slots; runs waiting for a slot it freed are told in turn.
    mutating func take(_ inputs: [SchedulerInput], in runID: String, now: Date) {
        // An input of a run already closed (a late probe answer) goes nowhere, and leaves
        // nothing on the slot board.
        guard !inputs.isEmpty, runID == main.run.id || occurrenceRuns[runID] != nil else { return }
        // Alone, the run of one-shot jobs needs no board (the path of 100,000 jobs): the board
        // is emptied when the last occurrence closes.
        let shared = !occurrenceRuns.isEmpty
        let inputs = shared ? slots.news(for: runID).map { [.slotsElsewhere($0)] + inputs } ?? inputs : inputs
        var freed: [String] = []
        if runID == main.run.id {
            decision.append(main.handle(inputs, now: now))
            if shared { freed = slots.update(runID, taken: main.slotsTaken, wanting: main.slotsWanted) }
        } else if let answer = occurrenceRuns[runID]?.scheduler.handle(inputs, now: now),
            let scheduler = occurrenceRuns[runID]?.scheduler
        {
            touched.insert(runID)
            wakes[runID] = scheduler.nextWakeDate
            decision.append(answer)
            freed = slots.update(runID, taken: scheduler.slotsTaken, wanting: scheduler.slotsWanted)
        }
        // Runs waiting for a slot this one freed may start now (told what is held first).
        for other in freed where !stopped {
            if let news = slots.news(for: other) { take([.slotsElsewhere(news)], in: other, now: now) }
        }
    }

    mutating func takeEverywhere(_ inputs: [SchedulerInput], now: Date) {
        take(inputs, in: main.run.id, now: now)
        for runID in occurrenceRuns.keys.sorted() { take(inputs, in: runID, now: now) }
    }

    /// Takes in an occurrence run under way, with what is kept about it: that it may have
    /// finished, when it wants to be woken (a resumed one may wait for a backoff), and the
    /// slots it holds.
    mutating func track(_ runID: String, _ occurrence: Occurrence, _ scheduler: Scheduler) {
        occurrenceRuns[runID] = OccurrenceRun(occurrence: occurrence, scheduler: scheduler)
        touched.insert(runID)
        wakes[runID] = scheduler.nextWakeDate
        _ = slots.update(runID, taken: scheduler.slotsTaken, wanting: scheduler.slotsWanted)
    }

    /// What an occurrence run being opened is told first: what the other runs hold of the
    /// pipelines' slots (the run of one-shot jobs as it is now), and that the machine is
    /// offline if it is.
    mutating func openingInputs(_ runID: String) -> [SchedulerInput] {
        _ = slots.update(main.run.id, taken: main.slotsTaken, wanting: main.slotsWanted)
        return [.slotsElsewhere(slots.opening(runID))] + (online ? [] : [.connectivity(online: false)])
    }

    /// A repeatable source for one new scheduler, seeded from the conductor's own.
    mutating func nextSource() -> SeededRandomSource {
        SeededRandomSource(seed: UInt64(random.nextUnit() * Double(UInt64(1) << 53)))
    }

    /// A stop: every run is told; occurrences held for their needs become runs that the next
    /// runner resumes.
    private mutating func stop(now: Date) {
        guard !stopped else { return }
        stopped = true
        let held = waiting
        waiting = []
        // Postponed ones stay listed as waiting in their schedule records: the next runner
        // starts them, without a run made for each now.
        postponed = []
        takeEverywhere([.stop], now: now)
        for occurrence in held { materialize(occurrence, now: now) }
    }
}
