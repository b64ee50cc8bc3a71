import Foundation
import JobRunnerCore
import Synchronization
import Testing

@testable import JobRunnerShell

/// A constraint's `satisfy` output is what the attempts it failed point at.
@Suite struct ShellConstraintsTests {
    /// A `satisfy` the runner's stop ends fails nothing, so it does not replace the output of
    /// the one that did (a stop under `serve` left failed attempts pointing at another text).
    @Test func aSatisfyEndedByAStopKeepsTheOutputOfTheLastOneThatEnded() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("satisfy-\(UUID())")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let log = directory + "/t.log"
        let record = directory + "/t.pid"
        try "the one that failed\n".write(toFile: log, atomically: true, encoding: .utf8)
        let constraint = ConstraintDefinition(
            name: "t", check: "false", satisfy: "echo interrupted one; sleep 600", workingDirectory: directory
        )
        let ended = Flag()
        let satisfy = Task {
            defer { ended.set() }
            return await ShellConstraints().satisfy(constraint, logPath: log, processPath: record)
        }
        // The shell writes the record before the command runs; nothing else tells it has begun.
        // A loaded machine may start the task late: it is waited for, unless it ended without.
        #expect(await Self.appears(record, unless: ended))
        satisfy.cancel()
        _ = await satisfy.value
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "the one that failed\n")
    }

    /// Whether a file appears before `ended` is set, looked for from a thread of its own (the
    /// task that makes it may wait for the cooperative pool).
    static func appears(_ path: String, unless ended: Flag) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread {
                while !FileManager.default.fileExists(atPath: path) && !ended.isSet { usleep(10_000) }
                continuation.resume(returning: FileManager.default.fileExists(atPath: path))
            }.start()
        }
    }

    /// Set once, read from any thread.
    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .sequentiallyConsistent) }
        var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
    }
}
