import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerShell

/// The files an attempt talks back through are its own: what an earlier runner left at their
/// paths is not read as this attempt's, and nothing is left behind once the attempt has ended.
@Suite struct AttemptFilesTests {
    let handler = ShellHandler(slots: testSlots)

    @Test func filesAnEarlierRunnerLeftAreNotTakenForThisAttempts() async throws {
        let scratch = try Scratch()
        let directory = "\(scratch.path)/logs/job"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "stale=1\n".write(toFile: "\(directory)/job%1.output", atomically: true, encoding: .utf8)
        try "skip=stale\n".write(toFile: "\(directory)/job%1.control", atomically: true, encoding: .utf8)
        let result = await handler.run(scratch.request(.shell("true")))
        #expect(result.outcome == .succeeded)
        #expect(result.outputs == [:])
    }

    @Test func anAttemptLeavesOnlyItsLogInItsDirectory() async throws {
        let scratch = try Scratch()
        let long = String(repeating: "x", count: NeededOutputs.inlineLimit + 1)
        let result = await handler.run(
            scratch.request(
                .shell(
                    """
                    echo hello
                    echo "a=$(wc -c < "$JOBRUNNER_OUT_BUILD_BLOB_FILE")" >> "$JOBRUNNER_OUTPUT"
                    echo 'retry-after=5s' >> "$JOBRUNNER_CONTROL"
                    """),
                needed: ["build": ["blob": long]]))
        #expect(result.outcome == .succeeded)
        #expect(result.outputs["a"]?.trimmingCharacters(in: .whitespaces) == String(long.utf8.count))
        let left = try FileManager.default.contentsOfDirectory(atPath: "\(scratch.path)/logs/job")
        #expect(left == ["1.log"])
    }

    @Test func aFailedAttemptLeavesOnlyItsLogToo() async throws {
        let scratch = try Scratch()
        let result = await handler.run(
            scratch.request(.shell("echo a=1 >> \"$JOBRUNNER_OUTPUT\"; echo bye; exit 3")))
        #expect(result.outcome == .failed)
        let left = try FileManager.default.contentsOfDirectory(atPath: "\(scratch.path)/logs/job")
        #expect(left == ["1.log"])
    }
}

/// The fast reads of /proc the runner does at every attempt agree with the plain ones.
@Suite struct ProcReadsTests {
    @Test func startTimeIsTheTwentySecondFieldOfStat() throws {
        let fields = try #require(ProcessGroups.statFields(of: getpid()))
        #expect(ProcessGroups().startTime(of: getpid()) == UInt64(fields[19]))
        #expect(
            ProcessGroups().startTime(of: getppid())
                == ProcessGroups.statFields(of: getppid()).flatMap { UInt64($0[19]) })
    }
}
