import Foundation

/// Where a periodic job stands across runs, as stored: what the next start of a runner needs to
/// neither lose nor repeat an occurrence.
///
/// Every date up to ``lastScheduled`` is, in the same commit that passed it, either a run
/// (started, skipped or missed) or listed here as waiting (``backlog``, ``queued``): a runner
/// killed at any moment leaves each date in one of the two places, never in neither, never in
/// both.
public struct ScheduleRecord: Sendable, Hashable, Codable {
    public var jobID: String
    /// When the job was first seen: its first occurrence's date, and `every:`'s origin.
    public var anchor: Date
    /// The scheduled date of the last occurrence decided (started, queued, skipped or missed):
    /// the next one is the first fire date after it.
    public var lastScheduled: Date?
    /// The schedule these dates were computed for; another one recomputes the next date.
    public var schedule: String
    /// How the job's latest finished occurrence ended, and its run: a periodic job that needs
    /// this one goes on only after a success (SPEC 5.8).
    public var lastResult: RunState?
    public var lastRunID: String?
    /// The next scheduled date as computed when this record was written, for `status`.
    public var nextDue: Date?
    /// Occurrences decided to run that have no run yet, oldest first: one held until its needs
    /// are final, then the missed dates `catchUp: all` runs one after another. The next runner
    /// runs them in this order before anything new.
    public var backlog: [Date] = []
    /// The occurrence queued behind the running one (`overlap: queue` or `replace`), which has
    /// no run yet.
    public var queued: Date?
    /// The waiting dates (of ``backlog`` and ``queued``) that `jobrunner trigger` asked for:
    /// they are recorded `manual` when they run (SPEC 5.12).
    public var triggered: [Date] = []
    /// The job's `overlap` as the runner that wrote this record had it: what a `trigger` stored
    /// while no runner works meets when an occurrence is unfinished. Nil in a record written
    /// before it was kept.
    public var overlap: Overlap?

    public init(jobID: String, anchor: Date, lastScheduled: Date? = nil, schedule: String) {
        self.jobID = jobID
        self.anchor = anchor
        self.lastScheduled = lastScheduled
        self.schedule = schedule
    }

    /// The dates waiting, as stored: the backlog, then the queued one.
    public var waiting: [Date] { backlog + (queued.map { [$0] } ?? []) }

    private enum CodingKeys: String, CodingKey {
        case jobID, anchor, lastScheduled, schedule, lastResult, lastRunID, nextDue, backlog, queued,
            triggered, overlap
    }

    /// Decodes a stored record; one written before the waiting dates were stored has none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        jobID = try container.decode(String.self, forKey: .jobID)
        anchor = try container.decode(Date.self, forKey: .anchor)
        lastScheduled = try container.decodeIfPresent(Date.self, forKey: .lastScheduled)
        schedule = try container.decode(String.self, forKey: .schedule)
        lastResult = try container.decodeIfPresent(RunState.self, forKey: .lastResult)
        lastRunID = try container.decodeIfPresent(String.self, forKey: .lastRunID)
        nextDue = try container.decodeIfPresent(Date.self, forKey: .nextDue)
        backlog = try container.decodeIfPresent([Date].self, forKey: .backlog) ?? []
        queued = try container.decodeIfPresent(Date.self, forKey: .queued)
        triggered = try container.decodeIfPresent([Date].self, forKey: .triggered) ?? []
        overlap = try container.decodeIfPresent(String.self, forKey: .overlap).flatMap(Overlap.init)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(jobID, forKey: .jobID)
        try container.encode(anchor, forKey: .anchor)
        try container.encodeIfPresent(lastScheduled, forKey: .lastScheduled)
        try container.encode(schedule, forKey: .schedule)
        try container.encodeIfPresent(lastResult, forKey: .lastResult)
        try container.encodeIfPresent(lastRunID, forKey: .lastRunID)
        try container.encodeIfPresent(nextDue, forKey: .nextDue)
        try container.encode(backlog, forKey: .backlog)
        try container.encodeIfPresent(queued, forKey: .queued)
        try container.encode(triggered, forKey: .triggered)
        try container.encodeIfPresent(overlap?.rawValue, forKey: .overlap)
    }
}
