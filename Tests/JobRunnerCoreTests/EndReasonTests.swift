import JobRunnerCore
import Testing

@Suite struct EndReasonTests {
    /// A command that cannot be started (no such program, no such working directory) ends with
    /// exit code 127 and the reason `cannot start: …` (SPEC), not `exit:127`.
    @Test func aCommandThatCannotStartSaysWhyNotItsExitCode() {
        let result = AttemptResult(
            outcome: .failed, exitCode: 127,
            reason: "cannot start: cannot enter the working directory /nonexistent: No such file or directory"
        )
        #expect(
            EndReason(result).words
                == "cannot start: cannot enter the working directory /nonexistent: No such file or directory")
        #expect(EndReason(AttemptResult(outcome: .failed, exitCode: 127)).words == "exit:127")
        #expect(EndReason(AttemptResult(outcome: .failed, exitCode: 2, reason: "anything")).words == "exit:2")
        #expect(
            EndReason(AttemptResult(outcome: .failed, exitCode: 3, reason: "cannot start: the engine")).words
                == "exit:3", "only a command that could not start (exit 127) says so")
    }
}
