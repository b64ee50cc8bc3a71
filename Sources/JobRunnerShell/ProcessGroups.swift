import Foundation
import Glibc
import JobRunnerCore

/// Ends process groups: those a job leaves behind, and those a dead runner left (SPEC 5.9).
public struct ProcessGroups: OrphanTerminator {
    public init() {}

    /// Whether any process of the group still runs. Zombies do not count: an orphan that
    /// died waits for PID 1 to reap it, which in a container may take seconds or never happen.
    static func isAlive(group: Int32) -> Bool {
        if kill(-group, 0) != 0 && errno == ESRCH { return false }
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return true }
        for entry in entries {
            guard let pid = Int32(entry), let stat = Self.stat(of: pid), stat.group == group else { continue }
            if stat.state != "Z" && stat.state != "X" { return true }
        }
        return false
    }

    /// The fields of /proc/PID/stat after the command name: state (field 3) first.
    private static func statFields(of pid: Int32) -> [Substring]? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        // The command name (field 2) may hold spaces and parentheses: fields are counted after
        // its closing parenthesis.
        guard let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    private static func stat(of pid: Int32) -> (state: Substring, group: Int32)? {
        guard let fields = statFields(of: pid), fields.count > 2, let group = Int32(fields[2]) else {
            return nil
        }
        return (fields[0], group)
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
        // fields[0] is field 3 (state), so field 22, the start time, is fields[19].
        guard let fields = Self.statFields(of: pid), fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }
}
