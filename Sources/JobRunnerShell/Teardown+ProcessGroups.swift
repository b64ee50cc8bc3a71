import Foundation
import JobRunnerCore

extension Teardown {
    /// Ends work's processes by the policy, for every way an attempt runs in processes of its
    /// own (a shell job's, a plugin's worker, a plugin's process per attempt): the group gets
    /// SIGTERM, then SIGKILL once `killGrace` has passed on `clock` with any member left; then,
    /// with a `mark`, each process that still carries it (one that left the group, or was
    /// orphaned) has its group ended the same way. Returns once they are gone, or once SIGKILL
    /// could not end them either.
    ///
    /// - Parameters:
    ///   - group: the process group the work leads; nil: none was started.
    ///   - mark: the environment entries every process the work starts inherits.
    func end(group: Int32?, marked mark: [String]? = nil, clock: any RunnerClock) async {
        if let group { await ProcessGroups.terminate(group: group, killGrace: killGrace, clock: clock) }
        if let mark { await ProcessGroups.terminate(marked: mark, killGrace: killGrace, clock: clock) }
    }
}
