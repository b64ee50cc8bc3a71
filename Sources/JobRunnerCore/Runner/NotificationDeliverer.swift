import Foundation

/// Runs `notify:` hooks (SPEC 5.13) for the runner: the command line's runs the hook's command
/// with its environment and the run's summary, keeping its output like an attempt's.
public protocol NotificationDeliverer: Sendable {
    /// Runs `hook` for the finished run `runID`, each attempt within the hook's timeout, up to
    /// its attempts; nil when one succeeded, else why the last failed. Cancelling the task (the
    /// runner stops) ends the command.
    func deliver(_ hook: NotifyHook, runID: String) async -> String?
}
