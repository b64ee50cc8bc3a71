import Foundation
import JobRunnerCore

/// The waits a person at the terminal should hear about, each once: the first job that waits for
/// the internet or for a constraint, and a pipeline that is suspended while nothing else can
/// run, get a line saying so and what ends the wait; the same wait again (another job, the
/// runner's reminder every 30 s) gets none, until it ended (back online, the pipeline resumed).
/// `status` lists every waiting job. Waits for needs, slots, backoff or a schedule are the
/// ordinary course of a run: no line.
final class WaitAnnouncements: Sendable {
    private let announced = Locked(Set<String>())

    /// Whether `event` should be shown: false for a `waiting` event whose wait was announced
    /// already. Notes a `resumed` event's end of a wait, so that the next one is announced.
    func shows(_ event: RunEvent) -> Bool {
        switch event.kind {
        case .waiting:
            let key = (event.reason ?? "") + "|" + (event.job == nil ? event.pipeline ?? "" : "")
            return announced.withLock { $0.insert(key).inserted }
        case .resumed:
            let ended = [
                WaitingReason.suspended.words + "|" + (event.pipeline ?? ""),
                WaitingReason.internet.words + "|",
            ]
            announced.withLock { $0.subtract(ended) }
            return true
        default:
            return true
        }
    }

    /// The words after a job's name for a wait worth a line; nil for the others.
    static func words(for event: RunEvent) -> String? {
        guard let words = event.reason, let reason = JobReason(words: words, state: .waiting).waiting else {
            return nil
        }
        switch reason {
        case .internet:
            return "offline; the jobs that need the internet wait until it is back "
                + "(JOBRUNNER_ONLINE or connectivity.probe decides; `jobrunner status` lists them)"
        case .constraint(let name):
            return "constraint \(name) is not satisfied; its satisfy runs while the jobs that need it wait"
        case .suspended:
            let name = event.pipeline ?? "its pipeline"
            return "pipeline \(name) is suspended; `jobrunner resume \(name)` lets it go on"
        case .needs, .slot, .backoff, .interrupted, .schedule:
            return nil
        }
    }
}
