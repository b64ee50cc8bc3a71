import Foundation
import JobRunnerCore

/// What the pages read that `status` and `runs` do not: a page of the history with filters, and
/// a run whole with the view `status` makes of it.
extension ReadModel {
    /// One page of the history, newest first.
    struct RunsPage {
        var entries: [(run: RunRecord, counts: [JobState: Int])]
        /// How many runs match the filters.
        var total: Int
    }

    /// The runs that match the filters, newest first, the `page`th group of `perPage`, each
    /// with its jobs' counts (read for those runs only).
    /// - Parameters:
    ///   - job: runs that hold this job, or occurrences of this periodic job.
    ///   - state: runs in this state (`running`, `failed`, …).
    func runsPage(job: String?, state: String?, page: Int, perPage: Int) async throws(StoreError) -> RunsPage
    {
        let matching = try await runs().filter { run in
            if let state, run.state.rawValue != state { return false }
            if let job, run.occurrenceOf != job, !run.jobIDs.contains(job) { return false }
            return true
        }.sorted { ($0.startedAt, $0.id) > ($1.startedAt, $1.id) }
        let start = min(matching.count, max(0, page - 1) * perPage)
        var entries: [(run: RunRecord, counts: [JobState: Int])] = []
        for run in matching[start..<min(matching.count, start + perPage)] {
            entries.append((run, try await counts(runID: run.id)))
        }
        return RunsPage(entries: entries, total: matching.count)
    }

    /// How many of a run's jobs are in each state, from their states alone.
    func counts(runID: String) async throws(StoreError) -> [JobState: Int] {
        let overview = try await store.overview(runID: runID, listing: { _, _ in false }, withOutputs: false)
        var counts: [JobState: Int] = [:]
        for state in overview?.states.values.map({ $0 }) ?? [] { counts[state, default: 0] += 1 }
        return counts
    }

    /// Everything the run page shows: the run with its jobs' attempts and outputs, and the view
    /// `status` makes of it (every job listed); nil when there is no such run.
    func runDetail(runID: String) async throws(StoreError) -> RunDetail? {
        guard let snapshot = try await snapshot(runID: runID) else { return nil }
        var states: [String: JobState] = [:]
        states.reserveCapacity(snapshot.jobs.count)
        for (id, record) in snapshot.jobs { states[id] = record.state }
        let overview = RunOverview(
            run: snapshot.run, states: states, jobs: snapshot.jobs, outputs: snapshot.outputs)
        var view = RunView(
            overview: overview, suspended: try await pipelines(), runnerPID: await runnerPID(),
            countsUnlisted: false)
        view.schedules = try await schedules()
        if snapshot.run.occurrenceOf == nil { view.replaced = try await currentRunID() != snapshot.run.id }
        var shown: [String: JobState] = [:]
        shown.reserveCapacity(states.count)
        view.forEachJob { shown[$0.record.jobID] = $0.state }
        return RunDetail(snapshot: snapshot, view: view, shownStates: shown)
    }
}

/// A run whole, and `status`'s view of it.
struct RunDetail {
    var snapshot: RunSnapshot
    var view: RunView
    /// Each job's state as `status` shows it: a pending job that waits on something is
    /// `waiting`.
    var shownStates: [String: JobState]
    var run: RunRecord { snapshot.run }
}

extension RunView {
    /// How many jobs are in each state as `status` shows them: the listed jobs' shown states,
    /// and the others' counted states.
    var shownCounts: [JobState: Int] {
        var counts = unlisted
        forEachJob { counts[$0.state, default: 0] += 1 }
        return counts
    }
}
