import Foundation
import Glibc
import JobRunnerCore
import JobRunnerTesting
import Testing

@testable import JobRunnerShell

/// What a child finds when it starts, and how its output and end come back, on the path that
/// starts it without swift-subprocess (no standard input to write). The time limit only catches a
/// hang: on a machine loaded 15 times over its cores, the suite's other tests have kept one of
/// these from running for over a minute.
@Suite(.timeLimit(.minutes(5))) struct ChildSetupTests {
    private func run(
        _ program: ChildProcess.Program, _ arguments: [String], environment: [String: String]? = nil,
        in directory: String? = nil, onSpawn: @escaping @Sendable (Int32) -> Void = { _ in }
    ) async -> (ChildProcess.Termination, String) {
        let outcome = await ChildProcess(
            program: program, arguments: arguments, environment: environment, workingDirectory: directory,
            clock: ManualClock()
        ).run(onSpawn: onSpawn)
        return (outcome.termination, String(decoding: outcome.output, as: UTF8.self))
    }

    @Test func childrenAreWatchedOnTheRunnersOwnThreadOnThisKernel() {
        #expect(ChildWatcher.shared != nil, "Linux 5.3 and later have process descriptors")
    }

    @Test func aChildStartsWithNoSignalIgnoredOrBlocked() async {
        // The runner ignores SIGPIPE (as the Swift runtime may); a job must not inherit that.
        signal(SIGPIPE, SIG_IGN)
        let (termination, output) = await run(.path("/bin/cat"), ["/proc/self/status"])
        #expect(termination == .exited(0))
        func mask(_ name: String) -> UInt64? {
            let line = output.split(separator: "\n").first { $0.hasPrefix(name + ":\t") }
            return line.flatMap { UInt64($0.dropFirst(name.count + 2), radix: 16) }
        }
        // Signals 32 and 33 are the C library's own, which posix_spawn leaves as they are.
        let libraryOwn: UInt64 = 0b11 << 31
        #expect(mask("SigIgn").map { $0 & ~libraryOwn } == 0)
        #expect(mask("SigBlk") == 0)
    }

    @Test func aChildHoldsNoDescriptorOfTheRunnerButItsThree() async {
        // ls opens the directory it lists as descriptor 3.
        let (termination, output) = await run(.path("/bin/ls"), ["/proc/self/fd"])
        #expect(termination == .exited(0))
        #expect(output == "0\n1\n2\n3\n")
    }

    @Test func aChildLeadsAGroupOfItsOwnInItsWorkingDirectory() async throws {
        let scratch = try Scratch()
        let spawned = PIDBox()
        let (termination, output) = await run(
            .path("/bin/sh"), ["-c", "echo $$; cut -d' ' -f5 /proc/$$/stat; pwd -P"], in: scratch.path,
            onSpawn: { spawned.set($0) })
        #expect(termination == .exited(0))
        let pid = await spawned.spawned()
        let real = try #require(realpath(scratch.path, nil))
        defer { free(real) }
        #expect(output == "\(pid)\n\(pid)\n\(String(cString: real))\n")
    }

    @Test func aNameIsLookedUpInTheChildsOwnPath() async throws {
        let scratch = try Scratch()
        // Written by a child: a file this process held open for writing could leak into a child
        // another test spawns at that moment, and executing it would then fail (ETXTBSY).
        let written = await run(
            .path("/bin/sh"),
            [
                "-c",
                "printf '#!/bin/sh\\necho hello\\n' > say-hello-xyz && chmod 755 say-hello-xyz && : > plain-xyz",
            ],
            in: scratch.path)
        #expect(written.0 == .exited(0))
        // plain-xyz is not executable: skipped, as a shell skips it.
        let found = await run(.name("say-hello-xyz"), [], environment: ["PATH": "/nowhere:" + scratch.path])
        #expect(found.0 == .exited(0))
        #expect(found.1 == "hello\n")
        let (termination, _) = await run(.name("plain-xyz"), [], environment: ["PATH": scratch.path])
        guard case .failedToStart(let reason) = termination else {
            Issue.record("expected failedToStart, got \(termination)")
            return
        }
        #expect(reason.contains("plain-xyz"))
    }

    @Test func aMissingWorkingDirectoryFailsToStartAndSaysWhich() async {
        let (termination, _) = await run(.path("/bin/true"), [], in: "/no/such/directory-xyz")
        guard case .failedToStart(let reason) = termination else {
            Issue.record("expected failedToStart, got \(termination)")
            return
        }
        #expect(reason.contains("/no/such/directory-xyz"))
    }

    @Test func everyByteWrittenBeforeTheExitIsKeptWhileALeftoverHoldsThePipe() async {
        // More than a pipe holds, so it is read while the command runs; the sleep keeps the pipe
        // open past the exit, and the sweep ends it.
        let (termination, output) = await run(.path("/bin/sh"), ["-c", "sleep 30 & seq 1 30000; exit 4"])
        #expect(termination == .exited(4))
        #expect(output.hasSuffix("29999\n30000\n"))
        #expect(output.split(separator: "\n").count == 30000)
    }

    @Test func manyChildrenAtOnceEachGetTheirOwnOutputAndStatus() async {
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<40 {
                group.addTask {
                    let (termination, output) = await run(
                        .path("/bin/sh"), ["-c", "echo child-\(index); exit \(index % 7)"])
                    return termination == .exited(Int32(index % 7)) && output == "child-\(index)\n"
                }
            }
            for await fine in group { #expect(fine) }
        }
    }
}
