import Foundation

/// The records of a run's jobs, found by id through the plan's own index, and kept small: a job
/// whose record is what a new run starts with (pending, untouched) keeps nothing but a mark, and
/// a succeeded job keeps its counts and dates (40 bytes) instead of a whole record (224 bytes).
/// Either is made into its record again exactly when it is read; a record that would not come
/// back exactly is kept whole. At 100,000 jobs a dictionary by id of whole records reserved
/// 262,144 slots of about 240 bytes (63 MB), and an array of whole records took 22 MB.
struct JobTable {
    private let plan: RunPlan
    /// Per job in load order: `fresh`, `none` (no record), an index in `kept` (0 or more), or
    /// `-2 - i` for index `i` in `done`.
    private var slots: [Int32]
    private var kept: [JobRecord?] = []
    private var freeKept: [Int32] = []
    private var done: [Done] = []
    private var freeDone: [Int32] = []
    /// A job whose record has never been set, or is as a new run starts with it.
    private static let fresh: Int32 = -1
    private static let none: Int32 = Int32.min

    /// A succeeded job's record: what is not the plan's or the same for every succeeded job.
    private struct Done {
        var attempts: Int32
        var uncountedAttempts: Int32
        var exitCode: Int32
        var hasExitCode: Bool
        /// Seconds since the reference date; NaN for none.
        var firstStartedAt: Double
        var startedAt: Double
        var finishedAt: Double
    }

    /// The records of `plan`'s jobs from a table by id; a job without one has none here either,
    /// and records of jobs the plan does not have are left out.
    init(plan: RunPlan, records byID: [String: JobRecord]) {
        self.plan = plan
        self.slots = Array(repeating: Self.none, count: plan.jobs.count)
        for (position, job) in plan.jobs.enumerated() {
            if let record = byID[job.id] { set(record, at: position) }
        }
    }

    /// No job of `plan` has a record yet.
    init(plan: RunPlan) {
        self.plan = plan
        self.slots = Array(repeating: Self.none, count: plan.jobs.count)
    }

    /// The table, leaving one where no job has a record: handed on with no second reference to
    /// its storage, whose first write would copy it.
    mutating func handOver() -> JobTable {
        let table = self
        self = JobTable(plan: plan)
        return table
    }

    /// A new run's records, made from the plan: only its disabled jobs (skipped at once) keep
    /// a record.
    init(plan: RunPlan, new: NewJobRecords) {
        self.plan = plan
        self.slots = Array(repeating: Self.fresh, count: plan.jobs.count)
        for (position, job) in plan.jobs.enumerated() where !job.enabled { set(new[position], at: position) }
    }

    /// A job's record; setting one for a job the plan does not have does nothing.
    subscript(id: String) -> JobRecord? {
        get { plan.position(of: id).flatMap { record(at: $0) } }
        set {
            guard let position = plan.position(of: id) else { return }
            if let newValue {
                set(newValue, at: position)
            } else {
                release(position)
                slots[position] = Self.none
            }
        }
    }

    /// How many records are kept whole.
    var wholeRecordCount: Int { kept.count - freeKept.count }

    /// The state of the job at `position` in the plan, read without making its record; nil
    /// when it has none.
    func state(at position: Int) -> JobState? {
        let slot = slots[position]
        if slot == Self.none { return nil }
        if slot == Self.fresh { return .pending }
        if slot >= 0 { return kept[Int(slot)]?.state }
        return .succeeded
    }

    /// Whether the job at `position` has a record that lets the jobs that need it go on
    /// (``JobRecord/satisfiesNeeds``); a summary's or a fresh mark's answer comes without making
    /// the record.
    func satisfiesNeeds(at position: Int) -> Bool? {
        let slot = slots[position]
        if slot >= 0 { return kept[Int(slot)]?.satisfiesNeeds }
        return state(at: position)?.satisfiesNeeds
    }

    /// Whether the job at `position` has a record that ended in a way that blocks the jobs that
    /// need it: final and not satisfying needs.
    func endedBadly(at position: Int) -> Bool {
        guard let state = state(at: position), state.isFinal else { return false }
        return satisfiesNeeds(at: position) == false
    }

    /// The record of the job at `position` in the plan.
    subscript(position position: Int) -> JobRecord? { record(at: position) }

    /// Puts the plan's definition (pipeline, needs, attempts, `allowFailure`, `when`) into every
    /// record kept whole; a fresh mark or a summary is made from the plan, so is in step already.
    /// Definitions are read afresh on resume (SPEC 5.9).
    mutating func takeDefinitions() {
        for position in slots.indices where slots[position] >= 0 {
            guard var record = kept[Int(slots[position])] else { continue }
            let job = plan.jobs[position]
            guard
                record.needs != job.needs || record.maxAttempts != job.retry.attempts
                    || record.pipeline != job.pipeline || record.allowFailure != job.allowFailure
                    || record.when != job.when
            else { continue }
            record.needs = job.needs
            record.maxAttempts = job.retry.attempts
            record.pipeline = job.pipeline
            record.allowFailure = job.allowFailure
            record.when = job.when
            // It may now be a fresh mark or a summary.
            set(record, at: position)
        }
    }

    /// Every record, in load order.
    var values: some Collection<JobRecord> { plan.jobs.indices.lazy.compactMap { record(at: $0) } }

    private func record(at position: Int) -> JobRecord? {
        let slot = slots[position]
        if slot == Self.none { return nil }
        if slot == Self.fresh { return JobRecord(pending: plan.jobs[position]) }
        if slot >= 0 { return kept[Int(slot)] }
        return Self.doneIndex(slot).map { Self.record(plan.jobs[position], done[$0]) }
    }

    /// Takes a stored record of a job of the plan, as read in part: its definition's members are
    /// the plan's. An untouched pending job or a plainly succeeded one is told from its members
    /// alone, without making its record; nothing is kept for a job the plan does not have.
    mutating func take(_ progress: JobProgress) {
        guard let position = plan.position(of: progress.jobID) else { return }
        if progress.isUntouched {
            release(position)
            return
        }
        // What `set` keeps as a summary: what `record(_:_:)` makes back exactly (stored dates
        // are JSON numbers, never NaN).
        if progress.state == .succeeded, progress.occurrence.isEmpty, progress.reason == nil,
            progress.crashedInARow == 0, progress.nextAttemptAt == nil, progress.waitingSince == nil,
            let attempts = Int32(exactly: progress.attempts),
            let uncounted = Int32(exactly: progress.uncountedAttempts)
        {
            setSummary(
                Done(
                    attempts: attempts, uncountedAttempts: uncounted, exitCode: progress.exitCode ?? 0,
                    hasExitCode: progress.exitCode != nil,
                    firstStartedAt: Self.seconds(progress.firstStartedAt),
                    startedAt: Self.seconds(progress.startedAt), finishedAt: Self.seconds(progress.finishedAt)
                ),
                at: position)
            return
        }
        set(JobRecord(plan.jobs[position], progress), at: position)
    }

    private mutating func set(_ record: JobRecord, at position: Int) {
        let job = plan.jobs[position]
        if record == JobRecord(pending: job) {
            release(position)
            slots[position] = Self.fresh
            return
        }
        if record.state == .succeeded, let summary = Self.done(record), Self.record(job, summary) == record {
            setSummary(summary, at: position)
            return
        }
        let slot = slots[position]
        if slot >= 0 {
            kept[Int(slot)] = record
            return
        }
        release(position)
        if let free = freeKept.popLast() {
            kept[Int(free)] = record
            slots[position] = free
        } else {
            kept.append(record)
            slots[position] = Int32(kept.count - 1)
        }
    }

    private mutating func setSummary(_ summary: Done, at position: Int) {
        if let index = Self.doneIndex(slots[position]) {
            done[index] = summary
            return
        }
        release(position)
        if let free = freeDone.popLast() {
            done[Int(free)] = summary
            slots[position] = -2 - free
        } else {
            done.append(summary)
            slots[position] = -2 - Int32(done.count - 1)
        }
    }

    /// Frees what the job's slot holds; the slot says `fresh` after.
    private mutating func release(_ position: Int) {
        let slot = slots[position]
        if slot >= 0 {
            kept[Int(slot)] = nil
            freeKept.append(slot)
        } else if let index = Self.doneIndex(slot) {
            freeDone.append(Int32(index))
        }
        slots[position] = Self.fresh
    }

    /// The index in `done` a slot says, if it says one.
    private static func doneIndex(_ slot: Int32) -> Int? {
        slot <= -2 && slot != none ? Int(-2 - slot) : nil
    }

    private static func done(_ record: JobRecord) -> Done? {
        guard let attempts = Int32(exactly: record.attempts),
            let uncounted = Int32(exactly: record.uncountedAttempts)
        else { return nil }
        return Done(
            attempts: attempts, uncountedAttempts: uncounted, exitCode: record.exitCode ?? 0,
            hasExitCode: record.exitCode != nil, firstStartedAt: seconds(record.firstStartedAt),
            startedAt: seconds(record.startedAt), finishedAt: seconds(record.finishedAt))
    }

    private static func record(_ job: RunPlan.Job, _ done: Done) -> JobRecord {
        var record = JobRecord(pending: job)
        record.state = .succeeded
        record.attempts = Int(done.attempts)
        record.uncountedAttempts = Int(done.uncountedAttempts)
        record.exitCode = done.hasExitCode ? done.exitCode : nil
        record.firstStartedAt = date(done.firstStartedAt)
        record.startedAt = date(done.startedAt)
        record.finishedAt = date(done.finishedAt)
        return record
    }

    private static func seconds(_ date: Date?) -> Double { date?.timeIntervalSinceReferenceDate ?? .nan }

    private static func date(_ seconds: Double) -> Date? {
        seconds.isNaN ? nil : Date(timeIntervalSinceReferenceDate: seconds)
    }
}

/// How many needs each job of a run still waits for, in plan order (a dictionary by id cost
/// 6 MB at 100,000 jobs). A final job's count means nothing until it is set again.
struct NeedCounts {
    private let plan: RunPlan
    private var counts: [Int32]

    init(plan: RunPlan) {
        self.plan = plan
        self.counts = Array(repeating: 0, count: plan.jobs.count)
    }

    /// The count of the job at `position` in the plan.
    subscript(position position: Int) -> Int {
        get { Int(counts[position]) }
        set { counts[position] = Int32(clamping: newValue) }
    }

    /// A job's count; 0 for a job the plan does not have, where setting one does nothing.
    subscript(id: String) -> Int {
        get { plan.position(of: id).map { Int(counts[$0]) } ?? 0 }
        set {
            guard let position = plan.position(of: id) else { return }
            counts[position] = Int32(clamping: newValue)
        }
    }
}
