import Foundation
import Glibc
import JobRunnerCore
import Testing

@testable import JobRunnerShell

/// A log that cannot be written (a full disk) is said in the attempt's result, never passed
/// as the log of an attempt that printed nothing (issue 26, item 4); a control file too large
/// to read refuses the attempt rather than being ignored (item 15). `/dev/full` answers every
/// write with ENOSPC, as a full disk does.
@Suite struct LostLogTests {
    @Test func bytesThatCouldNotBeWrittenAreCountedWithTheirCause() {
        let log = CappedLog(path: "/dev/full", limit: 1 << 20)
        log.appendLine("hello")
        log.finish()
        #expect(log.problem == "its log could not be written: No space left on device (6 bytes lost)")
    }

    @Test func aLogWrittenWholeHasNoProblem() throws {
        let scratch = try Scratch()
        let log = CappedLog(path: scratch.path + "/fine.log", limit: 1 << 20)
        log.appendLine("hello")
        log.finish()
        #expect(log.problem == nil)
    }

    @Test func aSucceededAttemptWhoseLogWasLostSaysSo() async throws {
        let scratch = try Scratch()
        var request = scratch.request(.shell("echo hello; echo world"))
        request.logPath = "/dev/full"
        let result = await ShellHandler(slots: testSlots).run(request)
        #expect(result.outcome == .succeeded)
        #expect(
            result.logProblem == "its log could not be written: No space left on device (12 bytes lost)",
            "\(String(describing: result.logProblem))")
    }

    @Test func anAttemptThatPrintsNothingHasNoLogProblem() async throws {
        let scratch = try Scratch()
        var request = scratch.request(.shell("true"))
        request.logPath = "/dev/full"
        let result = await ShellHandler(slots: testSlots).run(request)
        #expect(result.outcome == .succeeded && result.logProblem == nil)
    }

    @Test func aControlFileOverItsLimitFailsTheAttemptSayingSo() async throws {
        let scratch = try Scratch()
        // A skip= line with a 70 KB reason: once ignored, leaving the job succeeded.
        let command =
            #"{ printf 'skip='; head -c 70000 /dev/zero | tr '\0' x; echo; } > "$JOBRUNNER_CONTROL""#
        let request = scratch.request(.shell(command))
        let result = await ShellHandler(slots: testSlots).run(request)
        #expect(result.outcome == .failed)
        #expect(
            result.end.words
                == "JOBRUNNER_CONTROL too large: at least 70006 bytes written, at most 65536 allowed; "
                + "nothing in it was read (a skip= or retry-after= line takes one short line)",
            "\(result.end.words)")
        let log = try String(contentsOfFile: request.logPath, encoding: .utf8)
        #expect(log.contains("JOBRUNNER_CONTROL too large"))
    }

    @Test func aFailedAttemptsOversizedControlFileIsSaidInItsLog() async throws {
        let scratch = try Scratch()
        let command =
            #"{ printf 'retry-after=1s\n'; head -c 70000 /dev/zero | tr '\0' x; } > "$JOBRUNNER_CONTROL"; exit 3"#
        let request = scratch.request(.shell(command))
        let result = await ShellHandler(slots: testSlots).run(request)
        #expect(result.end == .exited(3) && result.retryAfter == nil)
        let log = try String(contentsOfFile: request.logPath, encoding: .utf8)
        #expect(log.contains("JOBRUNNER_CONTROL too large"), "\(log)")
    }

    @Test func logFoldersAreMadeOwnerOnly() throws {
        let scratch = try Scratch()
        let path = scratch.path + "/logs/RUN/JOB/1.log"
        let log = CappedLog(path: path, limit: 1 << 20)
        log.appendLine("x")
        log.finish()
        for (file, mode) in [
            (scratch.path + "/logs", 0o700), (scratch.path + "/logs/RUN", 0o700),
            (scratch.path + "/logs/RUN/JOB", 0o700), (path, 0o600),
        ] {
            var info = stat()
            #expect(stat(file, &info) == 0)
            #expect(
                Int(info.st_mode) & 0o777 == mode, "\(file): \(String(Int(info.st_mode) & 0o777, radix: 8))")
        }
    }
}
