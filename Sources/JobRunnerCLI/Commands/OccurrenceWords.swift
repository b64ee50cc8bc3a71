import Foundation
import JobRunnerCore
import JobRunnerLMDB

/// What `logs` and `status` say about periodic jobs (SPEC 5.8), whose occurrences are runs of
/// their own: one that never started, and a periodic job looked for in another run.
enum OccurrenceWords {
    /// For an occurrence recorded without an attempt (skipped, missed): what became of it;
    /// nil for any other run.
    static func withoutAttempt(_ run: RunRecord) -> String? {
        guard let job = run.occurrenceOf else { return nil }
        let due = run.scheduledAt.map { " (due \(Timestamps.moment($0)))" } ?? ""
        switch run.state {
        case .skipped:
            return
                "occurrence \(run.id) of \(job)\(due) was skipped: it fell due while the last occurrence still ran (`overlap: skip`), so it has no attempt and no log"
        case .missed:
            return
                "occurrence \(run.id) of \(job)\(due) was missed: it fell due while no runner was up and `catchUp` did not run it, so it has no attempt and no log"
        default:
            return "occurrence \(run.id) of \(job)\(due) is \(run.state.rawValue) and has no attempt yet"
        }
    }

    /// Why `run` has no record of `job`, and where to look: the occurrence's own words, or, for
    /// a periodic job, its latest occurrence; else a "did you mean".
    static func noJob(_ job: String, in run: RunRecord, store: LMDBQueueStore) -> String {
        if run.occurrenceOf == job, let words = withoutAttempt(run) { return words }
        let occurrences = ((try? store.runs()) ?? []).filter { $0.occurrenceOf == job }
        if let latest = occurrences.max(by: {
            ($0.scheduledAt ?? $0.startedAt) < ($1.scheduledAt ?? $1.startedAt)
        }) {
            return
                "run \(run.id) has no job '\(job)': it is periodic, and each of its occurrences is a run of its own; its latest is \(latest.id) (\(latest.state.rawValue)): pass --run \(latest.id), or another id `jobrunner runs` lists"
        }
        return "run \(run.id) has no job '\(job)'"
            + Suggestion.hint(for: job, in: run.jobIDs.filter { $0 != job })
    }
}
