import Foundation

/// A top-level `notify:` hook (SPEC 5.13): a command or a plugin's handler run once for each finished run of one-shot
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
    /// The command: a `/bin/sh -c` string or an argv, as a job's `run:`; or a plugin's handler
    /// (`plugin:`), as a job's.
    public var command: HandlerSpec
    /// A plugin hook's `with:`.
    public var parameters: [String: JSONValue] = [:]
    /// Where a plugin hook's handler runs: on a plugin worker by default (`process`), so that a
    /// crashing handler cannot take the runner down, again at each restart, while its delivery
    /// stays stored.
    public var isolation = Isolation.process
    /// Where a plugin hook's `plugin:` and `with:` stand.
    public var pluginLocations: PluginLocations?
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
