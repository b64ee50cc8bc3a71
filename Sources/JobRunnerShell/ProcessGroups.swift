import Foundation
import Glibc
import JobRunnerCore

/// Ends process groups: those a job leaves behind, and those a dead runner left (SPEC 5.9).
public struct ProcessGroups: OrphanTerminator {
    public init() {}

    /// Whether any process of the group still exists.
    static func isAlive(group: Int32) -> Bool {
        kill(-group, 0) == 0 || errno == EPERM
    }

    /// SIGTERM to the group, then SIGKILL after `gracePeriod` if any member is left.
    static func terminate(group: Int32, gracePeriod: Duration) async {
        guard group > 1, isAlive(group: group) else { return }
        kill(-group, SIGTERM)
        let deadline = ContinuousClock.now + gracePeriod
        // These processes are not our children (or no longer are), so nothing can be awaited:
        // poll, backing off, until they are gone or the grace period is over.
        var pause = Duration.milliseconds(5)
        while isAlive(group: group), ContinuousClock.now < deadline {
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(200))
        }
        if isAlive(group: group) { kill(-group, SIGKILL) }
    }

    public func terminate(pid: Int32, startTime: UInt64?) async {
        // A recorded start time that no longer matches means the pid now belongs to someone else;
        // the group may still hold our job's other processes, so it is ended either way when
        // the leader is gone.
        if let startTime, let current = self.startTime(of: pid), current != startTime { return }
        await Self.terminate(group: pid, gracePeriod: .seconds(5))
    }

    public func startTime(of pid: Int32) -> UInt64? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        // The command name (field 2) may hold spaces and parentheses: fields are counted after
        // its closing parenthesis. Field 22 is the start time.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state), so field 22 is fields[19].
        guard fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }
}
