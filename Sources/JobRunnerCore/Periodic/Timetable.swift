import Foundation
import HeapModule

/// What the ``Timetable`` needs of a schedule: its fire dates. ``Schedule`` is one; tests use
/// simpler ones.
public protocol FireSchedule: Sendable {
    /// The first fire date strictly after `date`; `anchor` is when the job was first seen
    /// (`every:` counts from it). Nil when the schedule never fires again.
    func nextFireDate(after date: Date, anchor: Date) -> Date?
}

/// An occurrence of a periodic job: the job and its scheduled date (SPEC 5.8).
public struct Occurrence: Sendable, Hashable, Comparable {
    public var jobID: String
    public var scheduledAt: Date
    /// Asked for by `jobrunner trigger` (SPEC 5.12): `scheduledAt` is the time of the request.
    public var manual: Bool

    public init(jobID: String, scheduledAt: Date, manual: Bool = false) {
        self.jobID = jobID
        self.scheduledAt = scheduledAt
        self.manual = manual
    }

    public static func < (lhs: Occurrence, rhs: Occurrence) -> Bool {
        (lhs.scheduledAt, lhs.jobID) < (rhs.scheduledAt, rhs.jobID)
    }
}

/// Decides when each periodic job's occurrences start (SPEC 5.8): due dates, catch-up after
/// downtime, overlap with a running occurrence. Pure like the ``Scheduler``: it is told the time
/// and what ended, and answers with what to start, what to record and when to look again.
public struct Timetable {
    /// A periodic job as the timetable sees it.
    public struct Job: Sendable {
        public var id: String
        public var schedule: any FireSchedule
        /// The schedule's text, stored so a changed schedule is noticed.
        public var scheduleText: String
        public var catchUp: CatchUp
        public var overlap: Overlap

        public init(
            id: String, schedule: any FireSchedule, scheduleText: String, catchUp: CatchUp = .latest,
            overlap: Overlap = .skip
        ) {
            self.id = id
            self.schedule = schedule
            self.scheduleText = scheduleText
            self.catchUp = catchUp
            self.overlap = overlap
        }
    }

    /// What the timetable decided.
    public struct Decision: Sendable, Hashable {
        /// Occurrences to start now, oldest first.
        public var starts: [Occurrence] = []
        /// Running occurrences to end now, because a newer one replaces them (`overlap: replace`).
        public var replaced: [Occurrence] = []
        /// Occurrences that came due while the last still ran and were skipped (`overlap: skip`).
        public var skipped: [Occurrence] = []
        /// Occurrences missed during downtime that are not run (`catchUp`).
        public var missed: [Occurrence] = []
        /// Schedule records to store before any of this is acted on.
        public var records: [ScheduleRecord] = []

        public init() {}

        public var isEmpty: Bool {
            starts.isEmpty && replaced.isEmpty && skipped.isEmpty && missed.isEmpty && records.isEmpty
        }
    }

    /// At most this many missed occurrences of one job run after downtime with `catchUp: all`.
    public static let catchUpLimit = CatchUp.maximumCaughtUp
    /// An occurrence found due no later than this after its date is on time, not missed: a
    /// runner wakes a little after each date.
    public static let lateness: TimeInterval = 60

    private var jobs: [String: Job] = [:]
    private var records: [String: ScheduleRecord]
    /// The running occurrence of each job, and the one queued behind it.
    private var running: [String: Occurrence] = [:]
    private var queued: [String: Occurrence] = [:]
    /// Missed occurrences that `catchUp: all` runs one after another, oldest first.
    private var backlog: [String: [Occurrence]] = [:]
    /// Running occurrences that the runner holds until their needs are final: they have no run
    /// yet, so their records list them as waiting.
    private var held: [String: Occurrence] = [:]
    /// Jobs whose waiting occurrences the next tick looks at: those a dead or stopped runner
    /// left (they start unless an occurrence of theirs runs), and removed jobs (their records
    /// drop them).
    private var unsettled = Set<String>()

    /// - Parameter records: the stored schedule records, by job id.
    /// Each job's next date, and the same dates in a heap, earliest first: a tick looks only at
    /// the jobs that are due, so 10,000 idle jobs cost nothing between their dates. An entry whose
    /// date is no longer its job's is stale and skipped.
    private var nextDates: [String: Date] = [:]
    private var due = Heap<DueEntry>()

    private struct DueEntry: Comparable {
        let date: Date
        let jobID: String
        static func < (lhs: DueEntry, rhs: DueEntry) -> Bool { (lhs.date, lhs.jobID) < (rhs.date, rhs.jobID) }
    }

    public init(jobs: [Job], records: [String: ScheduleRecord]) {
        self.records = records
        for job in jobs { self.jobs[job.id] = job }
        for id in self.jobs.keys { reschedule(id) }
        // What the last runner decided to run and did not start yet waits as it did then.
        for (id, record) in records where self.jobs[id] != nil && !record.waiting.isEmpty {
            let triggered = Set(record.triggered)
            func occurrence(_ date: Date) -> Occurrence {
                Occurrence(jobID: id, scheduledAt: date, manual: triggered.contains(date))
            }
            if !record.backlog.isEmpty { backlog[id] = record.backlog.map(occurrence) }
            queued[id] = record.queued.map(occurrence)
            unsettled.insert(id)
        }
    }

    /// When the timetable must be asked again: the earliest next date of a job (perhaps a little
    /// early, when that job's date changed: the tick then finds nothing to do).
    public var nextWakeDate: Date? { due.min?.date }

    /// Recomputes a job's next date after its record or definition changed.
    private mutating func reschedule(_ id: String) {
        guard let job = jobs[id], let date = nextDate(of: job) else {
            nextDates[id] = nil
            return
        }
        nextDates[id] = date
        due.insert(DueEntry(date: date, jobID: id))
    }

    /// The next scheduled date of a job, if it has one.
    public func nextDate(of id: String) -> Date? { jobs[id].flatMap(nextDate(of:)) }

    /// The stored record of a job.
    public func record(_ id: String) -> ScheduleRecord? { records[id] }

    /// Whether an occurrence of the job runs.
    public func isRunning(_ id: String) -> Bool { running[id] != nil }

    /// Decides what is due at `now`: a job seen for the first time is due at once; the others
    /// at their dates, caught up after downtime as `catchUp` says.
    public mutating func tick(now: Date) -> Decision {
        var decision = Decision()
        for id in unsettled.sorted() {
            // Left waiting by the last runner: the first starts unless one of the job's runs.
            if jobs[id] != nil, running[id] == nil, let next = takeNext(id) { decision.starts.append(next) }
            if let record = settled(id) { decision.records.append(record) }
        }
        unsettled = []
        var dueIDs = Set<String>()
        while let entry = due.min, entry.date <= now {
            due.removeMin()
            if nextDates[entry.jobID] == entry.date { dueIDs.insert(entry.jobID) }
        }
        for id in dueIDs.sorted() {
            defer { reschedule(id) }
            guard let job = jobs[id] else { continue }
            guard var record = records[id] else {
                // First seen: its first occurrence is due now.
                var record = ScheduleRecord(
                    jobID: id, anchor: now, lastScheduled: now, schedule: job.scheduleText)
                record.overlap = job.overlap
                record.nextDue = job.schedule.nextFireDate(
                    after: record.lastScheduled ?? now, anchor: record.anchor)
                records[id] = record
                arrive(Occurrence(jobID: id, scheduledAt: now), job: job, into: &decision)
                _ = settled(id)
                decision.records.append(records[id] ?? record)
                continue
            }
            // Kept for `trigger` without a runner: stored with this record's next change below,
            // or alone.
            let overlapChanged = record.overlap != job.overlap
            if overlapChanged {
                record.overlap = job.overlap
                records[id] = record
            }
            if record.schedule != job.scheduleText {
                // A changed schedule counts from now: its next date is its first after now.
                record.schedule = job.scheduleText
                record.anchor = now
                record.lastScheduled = now
                record.nextDue = job.schedule.nextFireDate(
                    after: record.lastScheduled ?? now, anchor: record.anchor)
                records[id] = record
                decision.records.append(record)
                continue
            }
            let due = dueDates(of: job, record: record, now: now)
            guard let last = due.last else {
                if overlapChanged { decision.records.append(record) }
                continue
            }
            record.lastScheduled = last
            record.nextDue = job.schedule.nextFireDate(
                after: record.lastScheduled ?? now, anchor: record.anchor)
            records[id] = record
            // On time: found due soon after its date. Late: missed while no runner was there.
            let onTime = due.filter { now.timeIntervalSince($0) <= Self.lateness }
            let chosen: [Date]
            switch job.catchUp {
            // At most the latest, and only when it fell due within `lateness` (SPEC 5.12): the
            // others of a frequent job found due together would each meet it running.
            case .none: chosen = Array(onTime.suffix(1))
            case .latest: chosen = Array(due.suffix(1))
            case .all: chosen = Array(due.suffix(Self.catchUpLimit))
            }
            let kept = Set(chosen)
            decision.missed += due.filter { !kept.contains($0) }.map {
                Occurrence(jobID: id, scheduledAt: $0)
            }
            var arriving = chosen.map { Occurrence(jobID: id, scheduledAt: $0) }
            if job.catchUp == .all && arriving.count > 1 {
                // A backlog runs in full, one after another, whatever `overlap` says of new ones.
                backlog[id, default: []] += arriving.dropFirst()
                arriving = Array(arriving.prefix(1))
                // A backlog restored after a crash and a new one together keep the newest
                // `catchUpLimit` (SPEC 5.8: at most 100); the older ones are recorded missed.
                if let waiting = backlog[id], waiting.count > Self.catchUpLimit {
                    let over = waiting.count - Self.catchUpLimit
                    decision.missed += waiting.prefix(over)
                    backlog[id] = Array(waiting.dropFirst(over))
                }
            }
            for occurrence in arriving { arrive(occurrence, job: job, into: &decision) }
            // Stored with the dates it passed: those that do not start now wait in it.
            _ = settled(id)
            decision.records.append(records[id] ?? record)
        }
        decision.starts.sort()
        return decision
    }

    /// An occurrence that a runner left unfinished runs again (it is resumed): nothing else of
    /// its job starts until it ends.
    public mutating func resumed(_ occurrence: Occurrence) {
        running[occurrence.jobID] = occurrence
    }

    /// Records how an occurrence's run ended; returns the record to store.
    public mutating func recordResult(of occurrence: Occurrence, runID: String, state: RunState)
        -> ScheduleRecord?
    {
        guard var record = records[occurrence.jobID] else { return nil }
        record.lastResult = state
        record.lastRunID = runID
        records[occurrence.jobID] = record
        return record
    }

    /// A job's `catchUp`, if it is periodic.
    public func catchUp(of id: String) -> CatchUp? { jobs[id]?.catchUp }

    /// Whether the job is periodic.
    public func contains(_ id: String) -> Bool { jobs[id] != nil }

    /// The job ids of the timetable.
    public var jobIDs: [String] { jobs.keys.sorted() }

    /// An occurrence ended; the one queued behind it starts.
    public mutating func ended(_ occurrence: Occurrence) -> Decision {
        var decision = Decision()
        let id = occurrence.jobID
        guard running[id] == occurrence else { return decision }
        running[id] = nil
        if held[id] == occurrence { held[id] = nil }
        if let next = takeNext(id) { decision.starts.append(next) }
        // The one started leaves the waiting list in the commit that starts it.
        if let record = settled(id) { decision.records.append(record) }
        return decision
    }

    /// The runner holds a started occurrence until its needs are final. Until it has a run,
    /// its record lists it as waiting, first in line. Returns the record to store if it changed.
    public mutating func hold(_ occurrence: Occurrence) -> ScheduleRecord? {
        guard running[occurrence.jobID] == occurrence else { return nil }
        held[occurrence.jobID] = occurrence
        return settled(occurrence.jobID)
    }

    /// A held occurrence got its run (or was recorded blocked); returns the record to store with
    /// it, if it changed.
    public mutating func release(_ occurrence: Occurrence) -> ScheduleRecord? {
        guard held[occurrence.jobID] == occurrence else { return nil }
        held[occurrence.jobID] = nil
        return settled(occurrence.jobID)
    }

    /// Makes the next waiting occurrence of a job (the backlog first, then the queued one) the
    /// running one.
    private mutating func takeNext(_ id: String) -> Occurrence? {
        let next: Occurrence
        if var waiting = backlog[id], !waiting.isEmpty {
            next = waiting.removeFirst()
            backlog[id] = waiting.isEmpty ? nil : waiting
        } else if let first = queued.removeValue(forKey: id) {
            next = first
        } else {
            return nil
        }
        running[id] = next
        return next
    }

    /// Writes what waits of a job (held, backlog, queued) into its record; returns the record
    /// when that changed it.
    private mutating func settled(_ id: String) -> ScheduleRecord? {
        guard var record = records[id] else { return nil }
        let waiting = (held[id].map { [$0] } ?? []) + (backlog[id] ?? [])
        let dates = waiting.map(\.scheduledAt)
        let queuedDate = queued[id]?.scheduledAt
        let triggered = (waiting + (queued[id].map { [$0] } ?? [])).filter(\.manual).map(\.scheduledAt)
        guard record.backlog != dates || record.queued != queuedDate || record.triggered != triggered else {
            return nil
        }
        record.backlog = dates
        record.queued = queuedDate
        record.triggered = triggered
        records[id] = record
        return record
    }

    /// Takes reloaded definitions: new jobs are scheduled at the next tick, removed ones are
    /// dropped (a running occurrence ends on its own; one held for its needs has no run and is
    /// dropped with what waits), a changed schedule recomputes the next date from now.
    public mutating func reload(_ jobs: [Job]) {
        var table: [String: Job] = [:]
        for job in jobs { table[job.id] = job }
        for id in self.jobs.keys where table[id] == nil {
            queued[id] = nil
            backlog[id] = nil
            // Held, it would count as running forever: nothing ends an occurrence without a run.
            if let occurrence = held.removeValue(forKey: id), running[id] == occurrence { running[id] = nil }
            unsettled.insert(id)
        }
        self.jobs = table
        for id in nextDates.keys where table[id] == nil { nextDates[id] = nil }
        for id in table.keys { reschedule(id) }
    }

    /// What became of a `jobrunner trigger` (SPEC 5.12).
    public enum Triggered: Sendable, Hashable {
        /// The occurrence starts now (its decision's ``Decision/starts``).
        case started(Occurrence)
        /// It waits behind the running occurrence (`overlap: queue` or `replace`).
        case queued(Occurrence)
        /// Nothing starts; the words say why.
        case refused(String)
    }

    /// An occurrence of `id` now, outside its schedule, as `overlap` allows: under `skip` it is
    /// refused while an occurrence runs; under `queue` it waits behind it; under `replace` it
    /// ends it. The job's schedule does not move: its next date stays what it was.
    public mutating func trigger(_ id: String, at now: Date) -> (Triggered, Decision) {
        var decision = Decision()
        guard let job = jobs[id] else {
            return (.refused("\(id) is not a periodic job of the runner's job files"), decision)
        }
        if running[id] != nil, job.overlap == .skip {
            return (.refused("an occurrence of \(id) still runs (overlap: skip)"), decision)
        }
        let occurrence = Occurrence(jobID: id, scheduledAt: now, manual: true)
        arrive(occurrence, job: job, into: &decision)
        if let record = settled(id) { decision.records.append(record) }
        return (decision.starts.contains(occurrence) ? .started(occurrence) : .queued(occurrence), decision)
    }

    /// An occurrence came due: it starts, or the overlap rule decides what becomes of it.
    private mutating func arrive(_ occurrence: Occurrence, job: Job, into decision: inout Decision) {
        let id = occurrence.jobID
        guard let current = running[id] else {
            running[id] = occurrence
            decision.starts.append(occurrence)
            return
        }
        switch job.overlap {
        case .skip:
            decision.skipped.append(occurrence)
        case .queue:
            if let waiting = queued[id] { decision.skipped.append(waiting) }
            queued[id] = occurrence
        case .replace:
            if !decision.replaced.contains(current) { decision.replaced.append(current) }
            if let waiting = queued[id] { decision.skipped.append(waiting) }
            queued[id] = occurrence
        }
    }

    private func nextDate(of job: Job) -> Date? {
        guard let record = records[job.id], record.schedule == job.scheduleText else {
            return Date.distantPast  // first seen: due at once
        }
        return job.schedule.nextFireDate(after: record.lastScheduled ?? record.anchor, anchor: record.anchor)
    }

    /// The fire dates after the last decided one, up to `now`; bounded so a long downtime of a
    /// frequent job costs no more than the catch-up limit needs.
    private func dueDates(of job: Job, record: ScheduleRecord, now: Date) -> [Date] {
        var dates: [Date] = []
        var cursor = record.lastScheduled ?? record.anchor
        var skippedCount = 0
        while let next = job.schedule.nextFireDate(after: cursor, anchor: record.anchor), next <= now {
            dates.append(next)
            if dates.count > Self.catchUpLimit + 1 {
                dates.removeFirst()
                skippedCount += 1
            }
            cursor = next
            if skippedCount > 1_000_000 { break }
        }
        return dates
    }
}

extension Schedule: FireSchedule {}

extension Timetable.Job {
    /// A periodic job of the loaded files, as the timetable sees it; nil for a one-shot job.
    public init?(_ definition: JobDefinition) {
        guard let schedule = definition.schedule, definition.enabled else { return nil }
        self.init(
            id: definition.id, schedule: schedule, scheduleText: schedule.description,
            catchUp: definition.catchUp,
            overlap: definition.overlap)
    }

    /// The timetable entries of a workload's enabled periodic jobs, in load order. By index: a
    /// copy of each of 100,000 one-shot definitions cost more than the look at its schedule.
    public static func entries(of workload: Workload) -> [Timetable.Job] {
        workload.jobs.indices.compactMap { index in
            workload.jobs[index].schedule == nil ? nil : Timetable.Job(workload.jobs[index])
        }
    }
}
