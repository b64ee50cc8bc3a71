import CJobRunnerSystem
import Foundation
import Glibc
import JobRunnerCore
import JobRunnerTesting
import Testing

@testable import JobRunnerShell

/// What ``ChildWatcher`` does when the kernel answers other than this one does: an older kernel,
/// or a child whose end is seen before it can be reaped. Each is played through
/// ``ChildWatcher/Kernel``, since no test can make the kernel do it. Every watcher made here
/// keeps a parked thread for the rest of the run. The time limit only catches a hang.
@Suite(.timeLimit(.minutes(5))) struct ChildWatcherKernelTests {
    @Test func thisKernelsWaitidTakesAProcessDescriptor() throws {
        // The probe's answer on a kernel that knows P_PIDFD: not a child of its own.
        let own = jobrunner_pidfd_open(getpid())
        try #require(own >= 0)
        defer { close(own) }
        #expect(jobrunner_pidfd_wait_probe(own) == ECHILD)
        #expect(ChildWatcher.shared != nil)
    }

    @Test func aKernelWhoseWaitidRefusesProcessDescriptorsGetsNoWatcher() {
        // Linux 5.3 has pidfd_open but not waitid(P_PIDFD): a watcher there could reap no child
        // and would report every one as a crash. Without one, children go through
        // swift-subprocess, which makes the same check.
        let linux53 = ChildWatcher.Kernel(probeWait: { _ in EINVAL }, reap: ChildWatcher.Kernel.system.reap)
        #expect(ChildWatcher(kernel: linux53) == nil)
    }

    @Test func aReapThatFindsNothingYetIsNotACrashAndTheChildIsReapedLater() async throws {
        let calls = Locked<[Int32: Int]>([:])
        // The first reap of each child finds nothing, as when its descriptor is readable before
        // the child can be reaped; the later ones ask the kernel.
        let late = ChildWatcher.Kernel(
            probeWait: ChildWatcher.Kernel.system.probeWait,
            reap: { pidfd in
                let call = calls.withLock { seen -> Int in
                    seen[pidfd, default: 0] += 1
                    return seen[pidfd, default: 0]
                }
                return call == 1 ? .notYet : ChildWatcher.Kernel.system.reap(pidfd)
            })
        let watcher = try #require(ChildWatcher(kernel: late))
        let spawned = Locked<Int32>(0)
        let result = await ChildProcess(
            program: .path("/bin/sh"), arguments: ["-c", "echo before; exit 3"], clock: ManualClock()
        ).spawnDirectly(
            watching: watcher, errorFile: nil, started: Latch(),
            onSpawn: { pid in spawned.withLock { $0 = pid } })
        let ended = try result.get()
        #expect(ended.status == .exited(3))
        #expect(ended.output == Array("before\n".utf8))
        #expect(calls.withLock { $0.values.max() ?? 0 } >= 2)
        // Reaped, not left a zombie of this process.
        let pid = spawned.withLock { $0 }
        let entry = ProcessGroups.entry(pid)
        #expect(
            entry == nil || entry?.parent != getpid(), "child \(pid) left as \(String(describing: entry))")
    }
}
