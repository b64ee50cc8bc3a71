import CJobRunnerSystem
import Foundation
import Glibc
import JobRunnerCore

/// Processes that left their attempt's process group (`setsid`, `setpgid`, a double fork) are
/// still the attempt's: the environment they inherited names its run, job and attempt. The
/// runner is a child subreaper, so once their parent is gone such processes become its children
/// rather than PID 1's: after an attempt's group is ended, the runner's children that it did
/// not spawn itself are the only places to look, which keeps the look cheap.
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

    /// The pids of the live children ``ChildProcess`` spawned, which their spawner awaits.
    private static let spawnedChildren = Locked<Set<Int32>>([])

    /// `pid` was spawned by ``ChildProcess``, which will reap it.
    static func spawned(_ pid: Int32) { _ = spawnedChildren.withLock { $0.insert(pid) } }

    /// `pid` was reaped by its spawner.
    static func reaped(_ pid: Int32) { _ = spawnedChildren.withLock { $0.remove(pid) } }

    /// One process as /proc/PID/stat shows it.
    struct Entry {
        var pid: Int32
        var state: UInt8
        var parent: Int32
        var group: Int32
        var session: Int32
    }

    /// Every process, read with plain system calls: this runs after every shell attempt.
    static func processTable() -> [Entry] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var entries: [Entry] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while let item = readdir(directory) {
            guard let pid = number(item.pointee.d_name), let entry = readStat(pid, into: &buffer) else {
                continue
            }
            entries.append(entry)
        }
        return entries
    }

    private static func readStat(_ pid: Int32, into buffer: inout [UInt8]) -> Entry? {
        let count = readFile("/proc/\(pid)/stat", into: &buffer)
        guard count > 0, let close = buffer[0..<count].lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // After the command name: state, ppid, pgrp, session.
        var fields: [Int32] = []
        var index = close + 2
        guard index < count else { return nil }
        let state = buffer[index]
        index += 1
        var value: Int32 = 0
        var negative = false
        var inNumber = false
        while index < count && fields.count < 3 {
            let byte = buffer[index]
            if byte == UInt8(ascii: " ") {
                if inNumber { fields.append(negative ? -value : value) }
                value = 0
                negative = false
                inNumber = false
            } else if byte == UInt8(ascii: "-") {
                negative = true
            } else if byte >= 48 && byte <= 57 {
                value = value &* 10 &+ Int32(byte - 48)
                inNumber = true
            }
            index += 1
        }
        guard fields.count == 3 else { return nil }
        return Entry(pid: pid, state: state, parent: fields[0], group: fields[1], session: fields[2])
    }

    /// Reads up to the buffer's size; the byte count, or -1.
    static func readFile(_ path: String, into buffer: inout [UInt8]) -> Int {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return -1 }
        defer { Glibc.close(fd) }
        var total = 0
        while total < buffer.count {
            let count = buffer.withUnsafeMutableBytes { bytes in
                read(fd, bytes.baseAddress.map { $0 + total }, bytes.count - total)
            }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            total += count
        }
        return total
    }

    /// Whether the environment of `pid` holds every entry of `mark`.
    static func isMarked(_ pid: Int32, _ mark: [String]) -> Bool {
        isMarked(pid, anyOf: [mark])
    }

    /// Whether the environment of `pid` holds every entry of one of `marks`; read once.
    static func isMarked(_ pid: Int32, anyOf marks: [[String]]) -> Bool {
        guard let environment = readWholeFile("/proc/\(pid)/environ"), !environment.isEmpty else {
            return false
        }
        let variables = Set(environment.split(separator: 0))
        return marks.contains { mark in mark.allSatisfy { variables.contains(ArraySlice($0.utf8)) } }
    }

    /// A whole file read with plain system calls, or nil when it cannot be opened; for /proc
    /// files, whose size `stat` does not tell.
    private static func readWholeFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        return readAll(fd)
    }

    /// The process groups of live processes (this one aside) whose environment holds every
    /// entry of `mark`, looked for among all processes: for a runner that finds what a dead
    /// one left.
    /// - Parameter orphansOnly: only processes whose parent is PID 1, where orphans go when this
    ///   process is no subreaper: reading every process's environment after every attempt
    ///   costs too much.
    static func groups(marked mark: [String], orphansOnly: Bool = false) -> Set<Int32> {
        groups(markedByAnyOf: [mark], orphansOnly: orphansOnly)
    }

    /// The process groups of live processes (this one aside) marked by any of `marks`, in one
    /// look at every process.
    static func groups(markedByAnyOf marks: [[String]], orphansOnly: Bool = false) -> Set<Int32> {
        let me = getpid()
        var groups = Set<Int32>()
        for entry in processTable()
        where entry.pid != me && entry.state != UInt8(ascii: "Z") && (!orphansOnly || entry.parent == 1) {
            if isMarked(entry.pid, anyOf: marks) { groups.insert(entry.group) }
        }
        return groups
    }

    /// ``groups(marked:)`` on a thread of its own: a look at every process takes long enough
    /// to starve the cooperative pool (two threads on two cores), whose timers then slip.
    static func groupsOffThePool(marked mark: [String], orphansOnly: Bool = false) async -> Set<Int32> {
        await groupsOffThePool(markedByAnyOf: [mark], orphansOnly: orphansOnly)
    }

    static func groupsOffThePool(markedByAnyOf marks: [[String]], orphansOnly: Bool = false) async -> Set<
        Int32
    > {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: groups(markedByAnyOf: marks, orphansOnly: orphansOnly)) }
                .start()
        }
    }

    /// Whether orphans re-parented to this subreaper all go to its main thread. Since Linux
    /// 3.19 the kernel gives them to the first live thread of the subreaper, which is the main
    /// thread (jobrunner's never ends before the process); before, to whichever thread started
    /// their ancestor.
    private static let orphansGoToTheMainThread: Bool = {
        var names = utsname()
        guard uname(&names) == 0 else { return false }
        let release = withUnsafeBytes(of: names.release) {
            String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
        }
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        guard numbers.count == 2 else { return false }
        return numbers[0] > 3 || (numbers[0] == 3 && numbers[1] >= 19)
    }()

    /// The pids of the children orphans become: the main thread's
    /// `/proc/self/task/PID/children` where the kernel gives orphans to it (one small read
    /// after each attempt, whatever runs on the machine), else every thread's; a scan of every
    /// process where the kernel does not offer those files. Children ``ChildProcess`` spawned
    /// from other threads may be left out.
    static func adoptedChildren() -> [Int32] {
        orphansGoToTheMainThread ? children(ofThreads: [getpid()]) : children()
    }

    /// The pids of this process's children, from each thread's `/proc/self/task/TID/children`;
    /// a scan of every process where the kernel does not offer those files.
    static func children() -> [Int32] {
        guard let directory = opendir("/proc/self/task") else { return scannedChildren() }
        defer { closedir(directory) }
        var threads: [Int32] = []
        while let item = readdir(directory) {
            if let thread = number(item.pointee.d_name) { threads.append(thread) }
        }
        return children(ofThreads: threads)
    }

    private static func children(ofThreads threads: [Int32]) -> [Int32] {
        var found: [Int32] = []
        for thread in threads {
            let fd = open("/proc/self/task/\(thread)/children", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return scannedChildren() }
            let buffer = readAll(fd)
            Glibc.close(fd)
            var value: Int32 = 0
            for byte in buffer {
                if byte >= 48 && byte <= 57 {
                    value = value &* 10 &+ Int32(byte - 48)
                } else {
                    if value > 0 { found.append(value) }
                    value = 0
                }
            }
            if value > 0 { found.append(value) }
        }
        return found
    }

    /// What is left to read from `fd`, with plain system calls; for /proc files, whose size
    /// `stat` does not tell.
    private static func readAll(_ fd: Int32) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 4 << 10)
        var total = 0
        while true {
            if total == bytes.count { bytes.append(contentsOf: repeatElement(0, count: bytes.count)) }
            let count = bytes.withUnsafeMutableBytes { buffer in
                read(fd, buffer.baseAddress.map { $0 + total }, buffer.count - total)
            }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            total += count
        }
        bytes.removeSubrange(total...)
        return bytes
    }

    private static func scannedChildren() -> [Int32] {
        let me = getpid()
        return processTable().filter { $0.parent == me }.map(\.pid)
    }

    /// One process's /proc/PID/stat, or nil when it is gone.
    static func entry(_ pid: Int32) -> Entry? {
        var buffer = [UInt8](repeating: 0, count: 1024)
        return readStat(pid, into: &buffer)
    }

    /// Ends the process group of every orphan re-parented to this runner that carries `mark` —
    /// SIGTERM, then SIGKILL after `killGrace` — then reaps them. Called once the attempt's own
    /// group is gone, so what it left anywhere has come back to the runner.
    static func terminate(marked mark: [String], killGrace: Duration, clock: any RunnerClock) async {
        guard jobrunner_is_subreaper() == 1 else {
            // Orphans went to PID 1 (or to another subreaper, where they are not looked for).
            for group in await groupsOffThePool(marked: mark, orphansOnly: true).sorted() {
                await terminate(group: group, killGrace: killGrace, clock: clock)
            }
            return
        }
        // Ending a group can orphan processes of another (a daemon's own `setsid` children):
        // look again until nothing marked is left.
        for _ in 0..<8 {
            let ours = spawnedChildren.withLock { $0 }
            let orphans = adoptedChildren().filter { !ours.contains($0) }
            if orphans.isEmpty { return }
            reap(orphans)
            var groups = Set<Int32>()
            for pid in orphans where isMarked(pid, mark) {
                if let entry = entry(pid), entry.state != UInt8(ascii: "Z") { groups.insert(entry.group) }
            }
            if groups.isEmpty { return }
            await withTaskGroup(of: Void.self) { ending in
                for group in groups.sorted() {
                    ending.addTask { await terminate(group: group, killGrace: killGrace, clock: clock) }
                }
            }
        }
        let ours = spawnedChildren.withLock { $0 }
        reap(adoptedChildren().filter { !ours.contains($0) })
    }

    /// Reaps the zombies among `pids`, children of this process that it did not spawn itself:
    /// orphans re-parented to it as a subreaper. A child ``ChildProcess`` spawned leads a process
    /// group of its own in this session and is awaited by its spawner, so such a zombie is left
    /// alone even when its pid is not registered yet.
    static func reap(_ pids: [Int32]) {
        let me = getpid()
        let session = getsid(0)
        for pid in pids {
            guard let entry = entry(pid), entry.parent == me, entry.state == UInt8(ascii: "Z") else {
                continue
            }
            if entry.group == entry.pid && entry.session == session { continue }
            var status: Int32 = 0
            _ = waitpid(pid, &status, WNOHANG)
        }
    }

    /// Reaps every zombie orphan of this process.
    static func reapOrphans() {
        let ours = spawnedChildren.withLock { $0 }
        reap(adoptedChildren().filter { !ours.contains($0) })
    }

    /// A directory entry's name as a positive number, or nil.
    private static func number<Name>(_ name: Name) -> Int32? {
        withUnsafeBytes(of: name) { bytes -> Int32? in
            var value: Int32 = 0
            for byte in bytes {
                if byte == 0 { break }
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value &* 10 &+ Int32(byte - 48)
            }
            return value > 0 ? value : nil
        }
    }
}
