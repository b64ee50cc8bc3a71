import Foundation
import JobRunnerCore

/// What `logs` and `status` say about periodic jobs (SPEC 5.8), whose occurrences are runs of
/// their own: one that never started, and a periodic job looked for in another run.
enum OccurrenceWords {
    /// For an occurrence recorded `skipped` or `missed`, which has no job, no attempt and no
    /// log: what became of it; nil for any other run.
    static func withoutAttempt(_ run: RunRecord) -> String? {
        run.withoutAttemptWords { Timestamps.moment($0) }
    }

    /// Why `run` has no record of `job`, and where to look: the occurrence's own words, or, for
    /// a periodic job, its latest occurrence that ran; else a "did you mean".
    static func noJob(_ job: String, in run: RunRecord, reader: ReadModel) async -> String {
        if run.occurrenceOf == job, let words = withoutAttempt(run) { return words }
        // The latest occurrence that was not skipped or missed (it may have a log); else the
        // latest of any kind.
        if let (latest, ran) = (try? await reader.latestOccurrence(of: job)) ?? nil {
            let which = ran ? "the latest that ran" : "its latest"
            return
                "run \(run.id) has no job '\(job)': it is periodic, and each of its occurrences is a run of its own; \(which) is \(latest.id) (\(latest.state.rawValue)): pass --run \(latest.id), or another id `jobrunner runs` lists"
        }
        return "run \(run.id) has no job '\(job)'"
            + Suggestion.hint(for: job, in: run.jobIDs.filter { $0 != job })
    }
}
