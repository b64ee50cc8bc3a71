import Foundation

/// A top-level `notify:` hook (SPEC 5.13): a command run once for each finished run of one-shot
/// jobs and each finished occurrence whose final state matches `on`.
public struct NotifyHook: Sendable, Hashable {
    /// Which ends a hook is for.
    public enum On: String, Sendable, Hashable, CaseIterable {
        /// The run failed (a job failed, was blocked or cancelled).
        case failure
        /// The run succeeded.
        case success
        /// Every finished run.
        case always
    }

    public var name: String
    public var on: Set<On>
    /// The periodic jobs (and one-shot jobs) whose runs it is for; nil: every run and occurrence.
    public var jobs: [String]?
    /// The command: a `/bin/sh -c` string or an argv, as a job's `run:`.
    public var command: HandlerSpec
    /// Per delivery attempt; on expiry the attempt fails.
    public var timeout: Duration
    /// Delivery attempts in all (`retry.attempts`).
    public var attempts: Int
    public var location: SourceLocation?

    public static let defaultTimeout = Duration.seconds(30)

    public init(
        name: String, on: Set<On> = [.failure], jobs: [String]? = nil, command: HandlerSpec,
        timeout: Duration = NotifyHook.defaultTimeout, attempts: Int = 1, location: SourceLocation? = nil
    ) {
        self.name = name
        self.on = on
        self.jobs = jobs
        self.command = command
        self.timeout = timeout
        self.attempts = attempts
        self.location = location
    }

    /// Whether the hook falls due for a run that ended `state`: a run of one-shot jobs with
    /// `jobIDs` (`occurrenceOf` nil), or an occurrence of `occurrenceOf`.
    public func isDue(for state: RunState, occurrenceOf: String?, jobIDs: [String]) -> Bool {
        guard state == .succeeded || state == .failed else { return false }
        let matchesState = on.contains(.always) || on.contains(state == .failed ? .failure : .success)
        guard matchesState else { return false }
        guard let jobs else { return true }
        if let occurrenceOf { return jobs.contains(occurrenceOf) }
        return jobIDs.contains { jobs.contains($0) }
    }
}
