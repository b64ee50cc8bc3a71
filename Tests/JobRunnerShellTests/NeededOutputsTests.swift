import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerShell

/// Outputs within the 1 MiB cap must reach the jobs that need them, though Linux refuses an
/// environment string over 128 KiB (`Argument list too long`).
@Suite struct NeededOutputsTests {
    let handler = ShellHandler(slots: testSlots)

    @Test func aValueTooLongForTheEnvironmentArrivesAsAFile() async throws {
        let scratch = try Scratch()
        let big = String(repeating: "x", count: 200_000)
        let request = scratch.request(
            .shell(
                """
                test -z "${JOBRUNNER_OUT_BUILD_BLOB+set}" || exit 9
                cmp -s "$JOBRUNNER_OUT_BUILD_BLOB_FILE" expected || exit 8
                echo "small=$JOBRUNNER_OUT_BUILD_SMALL"
                echo "dir=$(dirname "$JOBRUNNER_OUT_BUILD_BLOB_FILE")" >> "$JOBRUNNER_OUTPUT"
                """), needed: ["build": ["blob": big, "small": "s"]])
        try big.write(toFile: scratch.path + "/expected", atomically: true, encoding: .utf8)
        let result = await handler.run(request)
        #expect(result.outcome == .succeeded, "\(scratch.log())")
        #expect(scratch.log() == "small=s\n")
        let directory = try #require(result.outputs["dir"])
        #expect(!FileManager.default.fileExists(atPath: directory), "the files go with the attempt")
    }

    @Test func valuesGoByFileOnceTheInlineTotalIsReached() {
        // Each entry a little under the limit once its name and pointer are counted: four fit.
        let piece = String(repeating: "y", count: NeededOutputs.inlineLimit - 100)
        var outputs: [String: String] = [:]
        for index in 0..<6 { outputs["k\(index)"] = piece }
        let split = NeededOutputs(["a": outputs])
        #expect(split.inline.count == 4)
        #expect(
            split.inline.keys.sorted() == [
                "JOBRUNNER_OUT_A_K0", "JOBRUNNER_OUT_A_K1", "JOBRUNNER_OUT_A_K2", "JOBRUNNER_OUT_A_K3",
            ])
        #expect(split.viaFile.keys.sorted() == ["JOBRUNNER_OUT_A_K4", "JOBRUNNER_OUT_A_K5"])
    }

    /// 90,000 short outputs (0.8 MB, within the 1 MiB cap) made the consumer fail with
    /// `Argument list too long`: the budget counted their values, not their names.
    @Test func manyShortValuesAreCountedWithTheirNamesAndPointers() {
        var outputs: [String: String] = [:]
        for index in 0..<90_000 { outputs["k\(index)"] = "v" }
        let split = NeededOutputs(["producer": outputs])
        let inlineBytes = split.inline.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 2 + 8 }
        #expect(inlineBytes <= NeededOutputs.inlineTotal)
        #expect(split.inline.count + split.viaFile.count == 90_000)
        #expect(!split.viaFile.isEmpty)
    }
}

/// Processes an attempt starts that leave its process group are ended with it.
@Suite struct EscapedProcessTests {
    @Test func aSetsidDaemonIsEndedWhenItsAttemptEnds() async throws {
        let scratch = try Scratch()
        let handler = ShellHandler(slots: testSlots)
        let result = await handler.run(
            scratch.request(
                .shell(
                    """
                    setsid sh -c 'trap "" TERM; echo $$ > daemon.pid; exec sleep 1003' > /dev/null 2>&1 < /dev/null &
                    while [ ! -s daemon.pid ]; do sleep 0.01; done
                    """), killGrace: .milliseconds(100)))
        #expect(result.outcome == .succeeded, "\(scratch.log())")
        let text = try String(contentsOfFile: scratch.path + "/daemon.pid", encoding: .utf8)
        let pid = try #require(Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        let entry = ProcessGroups.entry(pid)
        if entry != nil && entry?.state != UInt8(ascii: "Z") { kill(pid, SIGKILL) }
        #expect(entry == nil || entry?.state == UInt8(ascii: "Z"), "the daemon outlived its attempt")
    }
}
