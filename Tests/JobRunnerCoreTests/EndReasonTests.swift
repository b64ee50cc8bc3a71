import Foundation
import JobRunnerCore
import Testing

/// How an attempt's end decides the job's reason, and how stored reasons read back.
@Suite struct EndReasonTests {
    /// A command that cannot be started (no such program, no such working directory) ends with
    /// exit code 127 and the reason `cannot start: …` (SPEC), not `exit:127`.
    @Test func aCommandThatCannotStartSaysWhyNotItsExitCode() {
        let result = AttemptResult(
            .cannotStart(
                .command("cannot enter the working directory /nonexistent: No such file or directory")))
        #expect(result.exitCode == 127)
        #expect(result.outcome == .failed)
        #expect(
            EndReason(result.end).words
                == "cannot start: cannot enter the working directory /nonexistent: No such file or directory")
        #expect(EndReason(.exited(127)) == .exit(127))
    }

    /// An exit, a signal and a timeout stay what they are for the job; every other end gives
    /// the job its words.
    @Test func exitsSignalsAndTimeoutsAreKeptAsSuchTheRestAsWords() {
        #expect(EndReason(.exited(2)) == .exit(2))
        #expect(EndReason(.signalled(9)) == .signal(9))
        #expect(EndReason(.timedOut(after: .seconds(5))) == .timeout(after: .seconds(5)))
        #expect(EndReason(.pluginFailed("no")) == .message("no"))
        #expect(EndReason(.skipped("")) == .message("skipped"))
        let crash = AttemptEnd.crashed(.init(.perAttempt, .exited(3), lastOutput: "boom"))
        #expect(EndReason(crash) == .message("the plugin's process exited 3: boom"))
        #expect(crash.exitCode == 3, "the job's record keeps the plugin process's status")
    }

    /// The job and its attempt say the same words for the same end.
    @Test func theJobAndItsAttemptShareTheWords() {
        let ends: [AttemptEnd] = [
            .exited(2), .signalled(9), .timedOut(after: .milliseconds(300)), .pluginFailed("no"),
            .pluginRetry(""), .skipped("nothing to do"),
            .crashed(.init(.worker, .signalled(11))), .refused(.responseNotJSON("{")),
            .cannotStart(.pluginProcess(.perAttempt, "ENOENT")),
        ]
        for end in ends { #expect(EndReason(end).words == end.words, "\(end)") }
    }

    /// Records hold words; those of this version and of earlier ones read back as the reason
    /// they were, and say the same words again.
    @Test func storedWordsReadBackAsTheyWereWritten() {
        let cases: [(String, EndReason)] = [
            ("exit:2", .exit(2)),
            ("signal:9", .signal(9)),
            ("timeout after 30s", .timeout(after: .seconds(30))),
            ("timeout after 1m30s", .timeout(after: .seconds(90))),
            // Written by earlier versions: a shell job's bare `timeout`, and the in-process one.
            ("timeout", .timeout(after: nil)),
            (
                "timeout after 300ms; the handler was left running",
                .message("timeout after 300ms; the handler was left running")
            ),
            // Not as this version would word it: kept as the words they are.
            ("timeout after 90s", .message("timeout after 90s")),
            (
                "plugin process crashed: signal 11 (SIGSEGV, a bad memory access)",
                .message("plugin process crashed: signal 11 (SIGSEGV, a bad memory access)")
            ),
        ]
        for (words, reason) in cases {
            let read = JobReason(words: words, state: .failed)
            #expect(read == .ended(reason), "\(words)")
            #expect(read.words == words)
        }
    }
}
