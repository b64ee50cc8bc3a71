import Foundation

/// The records a new run starts with, one per job of its plan: `pending`, or `skipped` for a
/// disabled job. They are made from the plan when asked for, not held: a run of 100,000 jobs
/// opens with as many records to store and as many events to report, and holding them as
/// separate changes and effects cost about 400 bytes a job at the peak of the run's memory.
public struct NewJobRecords: Sendable, Hashable, RandomAccessCollection {
    public let runID: String
    /// When the run opened: a disabled job's `finishedAt` and every event's time.
    public let now: Date
    private let jobs: [RunPlan.Job]

    /// The records of every job of `plan` for run `runID`, opened at `now`.
    public init(runID: String, plan: RunPlan, now: Date) {
        self.runID = runID
        self.jobs = plan.jobs
        self.now = now
    }

    public var startIndex: Int { jobs.startIndex }
    public var endIndex: Int { jobs.endIndex }

    public subscript(position: Int) -> JobRecord {
        let job = jobs[position]
        var record = JobRecord(pending: job)
        if !job.enabled {
            record.state = .skipped
            record.reason = .ended(.disabled)
            record.finishedAt = now
        }
        return record
    }

    /// The id of the job at `position`, without making its record. Every new job's record has
    /// the empty occurrence (a one-shot job's).
    public func jobID(_ position: Int) -> String { jobs[position].id }

    /// What reports the job at `position`: `queued`, or `skipped` because it is disabled.
    public func event(_ position: Int) -> RunEvent {
        let job = jobs[position]
        return job.enabled
            ? RunEvent(time: now, run: runID, job: job.id, kind: .queued)
            : RunEvent(time: now, run: runID, job: job.id, kind: .skipped, reason: EndReason.disabled.words)
    }

    /// Every job's event, in load order.
    public var events: some RandomAccessCollection<RunEvent> { indices.lazy.map { event($0) } }
}

extension JobRecord {
    /// The record a job of `plan` starts with in a new run (before being skipped if disabled).
    init(pending job: RunPlan.Job) {
        self.init(jobID: job.id, pipeline: job.pipeline, needs: job.needs, maxAttempts: job.retry.attempts)
        allowFailure = job.allowFailure
        when = job.when
    }
}
