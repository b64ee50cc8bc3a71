import CJobRunnerSystem
import Foundation
import Glibc
import JobRunnerCore

/// Processes that left their attempt's process group (`setsid`, `setpgid`, a double fork) are
/// still the attempt's: the environment they inherited names its run, job and attempt. The
/// runner is a child subreaper, so such processes, once orphaned, become its children rather
/// than PID 1's, and it reaps them after ending them.
extension ProcessGroups {
    /// The environment entries that mark every process an attempt starts (SPEC 5.2's
    /// `JOBRUNNER_RUN`, `JOBRUNNER_JOB`, `JOBRUNNER_ATTEMPT`).
    public static func attemptMark(runID: String, jobID: String, attempt: Int) -> [String] {
        ["JOBRUNNER_RUN=\(runID)", "JOBRUNNER_JOB=\(jobID)", "JOBRUNNER_ATTEMPT=\(attempt)"]
    }

    /// Makes this process a child subreaper, so processes orphaned below it are re-parented to
    /// it (and reaped by it) instead of escaping to PID 1. False where the system refuses.
    @discardableResult
    public static func becomeSubreaper() -> Bool {
        jobrunner_become_subreaper() == 0
    }

    /// The process groups of live processes (this one aside) whose environment holds every
    /// entry of `mark`.
    static func groups(marked mark: [String]) -> Set<Int32> {
        let wanted = mark.map { Array($0.utf8) }
        var groups = Set<Int32>()
        let me = getpid()
        for pid in processIDs() where pid != me {
            // Unreadable (another user's) or gone: not ours. A zombie's environment is empty.
            guard let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ"),
                !environment.isEmpty
            else { continue }
            let variables = Set(environment.split(separator: 0).map(Array.init))
            guard wanted.allSatisfy(variables.contains), let fields = statFields(of: pid), fields.count > 2,
                fields[0] != "Z", let group = Int32(fields[2])
            else { continue }
            groups.insert(group)
        }
        return groups
    }

    /// Ends every process group that holds a process marked with `mark` — SIGTERM, then SIGKILL
    /// after `killGrace` — then reaps what became this process's zombies.
    static func terminate(marked mark: [String], killGrace: Duration, clock: any RunnerClock) async {
        // A process may start another group while the first is being ended: look again until
        // nothing marked is left (each round ends at least the groups it found).
        for _ in 0..<8 {
            let groups = groups(marked: mark)
            if groups.isEmpty { break }
            await withTaskGroup(of: Void.self) { ending in
                for group in groups.sorted() where group > 1 {
                    ending.addTask { await terminate(group: group, killGrace: killGrace, clock: clock) }
                }
            }
        }
        reapOrphans()
    }

    /// Reaps the zombies among this process's children that it did not spawn itself: orphans
    /// re-parented to it as a subreaper. A child it spawned leads a process group of its own in
    /// this session and is awaited by whoever spawned it, so such zombies are left alone.
    static func reapOrphans() {
        let me = getpid()
        let session = getsid(0)
        for pid in processIDs() where pid != me {
            guard let fields = statFields(of: pid), fields.count > 3, fields[0] == "Z",
                Int32(fields[1]) == me, let group = Int32(fields[2]), let sid = Int32(fields[3])
            else { continue }
            if group == pid && sid == session { continue }
            var status: Int32 = 0
            _ = waitpid(pid, &status, WNOHANG)
        }
    }
}
