import Foundation
import Glibc
import JobRunnerCore

/// Ends process groups: those a job leaves behind, and those a dead runner left (SPEC 5.9).
///
/// Ending a group is the same everywhere: SIGTERM, then SIGKILL once the grace period has
/// passed on the injected clock with any member left. The attempts' one ``Teardown`` policy
/// uses it (``Teardown/end(group:marked:clock:)``) for deadlines, stops and the sweep after a
/// main process exits, in ``ChildProcess`` and ``WorkerProcess``; the runner uses it, through
/// `OrphanTerminator`, for attempts a crashed runner left running.
public struct ProcessGroups: OrphanTerminator {
    /// Measures the grace period.
    public var clock: any RunnerClock
    /// Time between SIGTERM and SIGKILL for an orphan: its job's own `killGrace` was not
    /// recorded, so the default.
    public var killGrace: Duration

    /// A terminator that measures the grace period on `clock`.
    public init(clock: any RunnerClock = SystemClock(), killGrace: Duration = JobDefinition.defaultKillGrace)
    {
        self.clock = clock
        self.killGrace = killGrace
    }

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
    static func statFields(of pid: Int32) -> [Substring]? {
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = readFile("/proc/\(pid)/stat", into: &buffer)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
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

    /// SIGTERM to the group, then SIGKILL once `killGrace` has passed on `clock` with any member
    /// left; returns when the group is gone, or when SIGKILL could not end it either.
    ///
    /// A cancelled caller cuts the grace period short: the group is killed at once rather
    /// than left running.
    static func terminate(group: Int32, killGrace: Duration, clock: any RunnerClock) async {
        // Never the runner's own group, which a job could have joined (`setpgid`).
        guard group > 1, group != getpgrp(), isAlive(group: group) else { return }
        kill(-group, SIGTERM)
        let end = clock.now().addingTimeInterval(killGrace.seconds)
        let gone = await withTaskGroup(of: Bool.self) { race in
            race.addTask {
                try? await clock.sleep(until: end)
                return false
            }
            race.addTask {
                await waitUntilGone(group)
                return true
            }
            let first = await race.next() ?? false
            race.cancelAll()
            return first
        }
        guard !gone, isAlive(group: group) else { return }
        kill(-group, SIGKILL)
        // A killed process takes a moment to die; a few looks let the caller rely on the
        // group being gone. One stuck in the kernel (uninterruptible I/O) is not waited for.
        await waitUntilGone(group, looks: 12)
    }

    /// Returns once no process of the group runs, after at most `looks` looks, or when the task
    /// is cancelled. These processes are not our children, or no longer are, so nothing can be
    /// awaited: look, backing off from 5 ms to 200 ms between looks.
    private static func waitUntilGone(_ group: Int32, looks: Int = .max) async {
        var pause = Duration.milliseconds(5)
        var left = looks
        while isAlive(group: group), left > 0 {
            left -= 1
            do {
                try await Task.sleep(for: pause)
            } catch {
                return
            }
            pause = min(pause * 2, .milliseconds(200))
        }
    }

    /// Ends every process group the orphaned attempt may still have: the recorded leader's
    /// (unless that pid now belongs to a process started at another time), and the group of
    /// every process whose environment names this run, job and attempt — which finds the
    /// attempt even when the runner died before it could store the pid.
    public func terminate(_ orphan: Orphan) async {
        await terminate([orphan])
    }

    /// Ends the groups of every orphaned attempt as ``terminate(_:)-(Orphan)`` does one's, with
    /// one look at every process for all of them: a runner killed with eight attempts running
    /// read every process's environment eight times before it could start again.
    public func terminate(_ orphans: [Orphan]) async {
        guard !orphans.isEmpty else { return }
        var groups = Set<Int32>()
        for orphan in orphans {
            guard let pid = orphan.pid else { continue }
            let current = startTime(of: pid)
            if orphan.startTime == nil || current == nil || current == orphan.startTime { groups.insert(pid) }
        }
        let marks = orphans.map { Self.attemptMark(runID: $0.runID, jobID: $0.jobID, attempt: $0.attempt) }
        groups.formUnion(await Self.groupsOffThePool(markedByAnyOf: marks))
        for group in groups.sorted() where group > 1 {
            await Self.terminate(group: group, killGrace: killGrace, clock: clock)
        }
        Self.reapOrphans()
    }

    /// Ends the process group a `satisfy` leads, unless its pid now belongs to a process started
    /// at another time. Processes that left the group are not looked for: a `satisfy` may start
    /// a daemon meant to outlive it.
    public func terminate(_ satisfy: SatisfyProcess) async {
        let current = startTime(of: satisfy.pid)
        // A leader gone with its group alive still names the group: no other process may take
        // its pid while the group exists. A live process is ended only when its start time is
        // the one recorded: a record without one cannot tell the satisfy from a process that
        // took its pid since, and that process is left alone.
        guard current == nil || (satisfy.startTime != nil && current == satisfy.startTime) else { return }
        await Self.terminate(group: satisfy.pid, killGrace: killGrace, clock: clock)
        Self.reapOrphans()
    }

    static func processIDs() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
    }

    /// The start time of a live process (field 22 of /proc/PID/stat, in clock ticks since
    /// boot), recorded beside its pid so a pid the kernel has since reused is told apart.
    public func startTime(of pid: Int32) -> UInt64? {
        // Read at every spawn: bytes are counted, no text is made. Field 22 is the 20th after
        // the command name's closing parenthesis.
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = Self.readFile("/proc/\(pid)/stat", into: &buffer)
        guard count > 0, let close = buffer[0..<count].lastIndex(of: UInt8(ascii: ")")) else { return nil }
        var field = 2
        var value: UInt64 = 0
        var digits = 0
        for byte in buffer[(close + 1)..<count] {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") {
                if field == 22 { break }
                field += 1
            } else if field == 22 {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value &* 10 &+ UInt64(byte - 48)
                digits += 1
            }
        }
        return field == 22 && digits > 0 ? value : nil
    }
}
