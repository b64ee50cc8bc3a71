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
        for pid in processIDs() {
            guard let stat = Self.stat(of: pid), stat.group == group else { continue }
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

    /// Ends every process group the orphaned attempt may still have: the recorded leader's
    /// (unless that pid now belongs to a process started at another time), and the group of
    /// every process whose environment names this run, job and attempt — which finds the
    /// attempt even when the runner died before it could store the pid.
    public func terminate(_ orphan: Orphan) async {
        var groups = Set<Int32>()
        if let pid = orphan.pid {
            let current = startTime(of: pid)
            if orphan.startTime == nil || current == nil || current == orphan.startTime { groups.insert(pid) }
        }
        let marks = [
            "JOBRUNNER_RUN=\(orphan.runID)", "JOBRUNNER_JOB=\(orphan.jobID)",
            "JOBRUNNER_ATTEMPT=\(orphan.attempt)",
        ].map { Array($0.utf8) }
        for pid in Self.processIDs() where pid != getpid() {
            guard let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else {
                continue
            }
            let variables = Set(environment.split(separator: 0).map(Array.init))
            if marks.allSatisfy(variables.contains), let stat = Self.stat(of: pid) {
                groups.insert(stat.group)
            }
        }
        for group in groups.sorted() where group > 1 {
            await Self.terminate(group: group, gracePeriod: .seconds(5))
        }
    }

    private static func processIDs() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
    }

    public func startTime(of pid: Int32) -> UInt64? {
        // fields[0] is field 3 (state), so field 22, the start time, is fields[19].
        guard let fields = Self.statFields(of: pid), fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }
}
