import Foundation
import Glibc
import JobRunnerCore
import JobRunnerTesting
import Synchronization
import Testing

@testable import JobRunnerShell

/// The one thread that awaits every directly spawned child (``ChildWatcher``): nothing it opens
/// outlives a child, and no child's output holds up the others or its own end. The time limit
/// only catches a hang.
@Suite(.timeLimit(.minutes(5))) struct ChildWatcherTests {
    /// Output that takes 20 ms per piece to take in, as a log on a slow disk might: the writers
    /// below refill the pipe far faster than that, so it is never found empty.
    final class SlowSink: Sendable {
        private let bytes = Atomic<Int>(0)
        let first = Latch<Void>()

        var count: Int { bytes.load(ordering: .relaxed) }

        var output: ChildProcess.Output {
            .stream { piece in
                self.bytes.add(piece.count, ordering: .relaxed)
                self.first.set(())
                usleep(20_000)
            }
        }
    }

    private static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    @Test func manyChildrenLeaveNoDescriptorAndNoZombieBehind() async {
        let before = Self.openDescriptors()
        let pids = Locked<[Int32]>([])
        for index in 0..<400 {
            let outcome = await ChildProcess(
                program: .path("/bin/sh"), arguments: ["-c", "echo \(index)"], clock: ManualClock()
            ).run(onSpawn: { pid in pids.withLock { $0.append(pid) } })
            #expect(outcome.termination == .exited(0))
            #expect(outcome.output == Array("\(index)\n".utf8))
        }
        // Other tests of this process open and close descriptors meanwhile: a leak of one per
        // child would show as 400 more.
        let after = Self.openDescriptors()
        #expect(after - before < 100, "\(before) descriptors open before 400 children, \(after) after")
        let me = getpid()
        let zombies = pids.withLock { $0 }.filter { pid in
            guard let entry = ProcessGroups.entry(pid) else { return false }
            return entry.parent == me && entry.state == UInt8(ascii: "Z")
        }
        #expect(zombies.isEmpty, "children left unreaped: \(zombies)")
    }

    @Test func aChattyChildDoesNotHoldUpTheEndOfAnother() async {
        // The chatty child writes until it is cancelled: were its pipe read until empty, the
        // short child's end would never be seen and this test would hang.
        let chatty = SlowSink()
        let long = Task {
            await ChildProcess(
                program: .path("/bin/sh"), arguments: ["-c", "exec yes"], output: chatty.output,
                clock: ManualClock()
            ).run()
        }
        await chatty.first.value
        let short = await ChildProcess(
            program: .path("/bin/sh"), arguments: ["-c", "exit 5"], clock: ManualClock()
        )
        .run()
        #expect(short.termination == .exited(5))
        long.cancel()
        #expect(await long.value.termination == .stopped(.interrupted))
    }

    @Test func aLeftoverThatWritesWithoutPauseDoesNotHoldUpTheEnd() async {
        // The main process exits while its leftover writes (the pause lets it start); what the
        // leftover writes after the exit is not the main process's output and is not waited for.
        let sink = SlowSink()
        let outcome = await ChildProcess(
            program: .path("/bin/sh"), arguments: ["-c", "yes | head -c 40000000 & sleep 0.2; exit 3"],
            output: sink.output, clock: ManualClock()
        ).run()
        #expect(outcome.termination == .exited(3))
        #expect(sink.count < 20 << 20, "read \(sink.count) bytes, most written after the exit")
    }

    @Test func descriptorsEpollRefusesAreAnsweredAtOnceNotAwaitedForever() async throws {
        let watcher = try #require(ChildWatcher.shared)
        // -1 stands for any descriptor epoll will not watch.
        let answer = await watcher.wait(
            pidfd: -1, pipe: -1, output: .keep(lastBytes: 1), clock: ManualClock())
        #expect(answer == nil)
    }

    @Test func aRelativeEntryOfPathIsSearchedFromTheChildsWorkingDirectory() async throws {
        let scratch = try Scratch()
        let written = await ChildProcess(
            program: .path("/bin/sh"),
            arguments: [
                "-c",
                "mkdir bin && printf '#!/bin/sh\\necho here\\n' > bin/here-xyz && chmod 755 bin/here-xyz",
            ],
            workingDirectory: scratch.path, clock: ManualClock()
        ).run()
        #expect(written.termination == .exited(0))
        // A shell started in that directory would find it: so must a job started there.
        let found = await ChildProcess(
            program: .name("here-xyz"), environment: ["PATH": "/nowhere:bin"], workingDirectory: scratch.path,
            clock: ManualClock()
        ).run()
        #expect(found.termination == .exited(0))
        #expect(found.output == Array("here\n".utf8))
    }

    @Test func standardInputIsEmpty() async {
        let outcome = await ChildProcess(program: .path("/bin/cat"), clock: ManualClock()).run()
        #expect(outcome.termination == .exited(0))
        #expect(outcome.output.isEmpty)
    }

    @Test func aMissingWorkingDirectoryIsNamedAsSuch() async {
        let outcome = await ChildProcess(
            program: .path("/bin/sh"), arguments: ["-c", "true"], workingDirectory: "/no/such/place-xyz",
            clock: ManualClock()
        ).run()
        guard case .failedToStart(let reason) = outcome.termination else {
            Issue.record("expected failedToStart, got \(outcome.termination)")
            return
        }
        #expect(reason.contains("working directory /no/such/place-xyz"), "\(reason)")
    }
}
