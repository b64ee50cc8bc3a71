import Foundation
import JobRunnerCore
import Testing

/// The words of each way an attempt can end: what the attempt's record, events and `status`
/// say, made in one place (`AttemptEnd.words`).
@Suite struct AttemptEndTests {
    /// One case for each reason: the end, its words, and what the runner makes of it.
    struct Case: Sendable, CustomStringConvertible {
        var end: AttemptEnd
        var words: String
        var outcome: AttemptOutcome
        var exitCode: Int32? = nil
        var signal: Int32? = nil
        var description: String { words }
    }

    static let cases: [Case] = [
        Case(end: .succeeded, words: "succeeded", outcome: .succeeded),
        Case(end: .skipped("nothing to do"), words: "nothing to do", outcome: .skipped),
        Case(end: .skipped(""), words: "skipped", outcome: .skipped),
        Case(end: .exited(2), words: "exit:2", outcome: .failed, exitCode: 2),
        Case(end: .exited(75), words: "exit:75", outcome: .tempfail, exitCode: 75),
        Case(end: .signalled(9), words: "signal:9", outcome: .failed, signal: 9),
        Case(end: .timedOut(after: .seconds(30)), words: "timeout after 30s", outcome: .timeout),
        Case(end: .timedOut(after: .milliseconds(300)), words: "timeout after 300ms", outcome: .timeout),
        Case(end: .timedOut(after: .seconds(90)), words: "timeout after 1m30s", outcome: .timeout),
        Case(end: .interrupted(.runnerStopped), words: "the runner stopped", outcome: .interrupted),
        Case(
            end: .interrupted(.runnerStoppedBeforeStart), words: "the runner stopped before it started",
            outcome: .interrupted),
        Case(end: .interrupted(.runnerGone), words: "its runner is gone", outcome: .interrupted),
        Case(end: .interrupted(.runnerDied), words: "the runner died while it ran", outcome: .interrupted),
        Case(end: .interrupted(.byOperator(.cancel)), words: "cancelled by operator", outcome: .interrupted),
        Case(end: .interrupted(.byOperator(.skip)), words: "skipped by operator", outcome: .interrupted),
        Case(
            end: .crashed(.init(.worker, .signalled(11))),
            words: "the plugin's worker died: signal 11 (SIGSEGV, a bad memory access)", outcome: .failed,
            signal: 11),
        Case(
            end: .crashed(.init(.worker, .exited(3), beforeReady: true)),
            words: "the plugin's worker exited 3 before it was ready", outcome: .failed, exitCode: 3),
        Case(
            end: .crashed(.init(.perAttempt, .signalled(4))),
            words: "the plugin's process died: signal 4 (SIGILL, a Swift runtime trap such as fatalError)",
            outcome: .failed, signal: 4),
        Case(
            end: .crashed(.init(.perAttempt, .exited(1), lastOutput: "fatal: no")),
            words: "the plugin's process exited 1: fatal: no", outcome: .failed, exitCode: 1),
        Case(end: .pluginFailed("the widget is broken"), words: "the widget is broken", outcome: .failed),
        Case(end: .pluginFailed(""), words: "failed", outcome: .failed),
        Case(end: .pluginRetry("not yet"), words: "not yet", outcome: .tempfail),
        Case(end: .pluginRetry(""), words: "retry", outcome: .tempfail),
        Case(
            end: .refused(.outputsTooLarge(written: 2_000_000, limit: 1_048_576)),
            words:
                "outputs too large: at least 2000000 bytes written to JOBRUNNER_OUTPUT, at most 1048576 allowed",
            outcome: .failed),
        Case(
            end: .refused(.malformedOutput(line: 3, text: "oops")),
            words: "JOBRUNNER_OUTPUT line 3 is not key=value: 'oops'", outcome: .failed),
        Case(
            end: .refused(.responseNotJSON("{oops")), words: "plugin response is not valid JSON: {oops",
            outcome: .failed),
        Case(
            end: .refused(.responseTooLarge(claimed: 20_000_000, limit: 16 << 20)),
            words: "the plugin's response claims 20000000 bytes, more than the 16 MiB a response may have",
            outcome: .failed),
        Case(
            end: .refused(.responseTooLarge(claimed: nil, limit: 16 << 20)),
            words: "the plugin's response is longer than the 16 MiB a response may have", outcome: .failed),
        Case(
            end: .refused(.oversizedFrame(length: 9, limit: 8, beforeReady: false)),
            words: "the plugin's worker sent a response of 9 bytes, more than 8", outcome: .failed),
        Case(
            end: .refused(.oversizedFrame(length: 9, limit: 8, beforeReady: true)),
            words: "the plugin's worker sent a response of 9 bytes, more than 8 before it was ready",
            outcome: .failed),
        Case(
            end: .cannotStart(.command("executable \"x\" not found in PATH")),
            words: "cannot start: executable \"x\" not found in PATH", outcome: .failed, exitCode: 127),
        Case(
            end: .cannotStart(.pluginProcess(.worker, "ENOENT")),
            words: "cannot start the plugin's worker: ENOENT", outcome: .failed),
        Case(
            end: .cannotStart(.pluginProcess(.perAttempt, "ENOENT")),
            words: "cannot start the plugin's process: ENOENT", outcome: .failed),
        Case(
            end: .cannotStart(.pluginNotLoaded("cannot load libx.so")),
            words: "the plugin's worker cannot load it: cannot load libx.so", outcome: .failed),
        Case(
            end: .cannotStart(.plugin("plugin 'x' not found")), words: "plugin 'x' not found",
            outcome: .failed),
        Case(
            end: .cannotStart(.workDirectory(path: "/run/a", error: "EACCES")),
            words: "cannot create /run/a: EACCES", outcome: .failed),
        Case(
            end: .cannotStart(.neededOutputs("ENOSPC")), words: "cannot pass needed outputs: ENOSPC",
            outcome: .failed),
        Case(end: .cannotStart(.notForHandler("shell")), words: "not a shell job", outcome: .failed),
    ]

    @Test(arguments: cases) func eachReasonHasItsWords(_ given: Case) {
        #expect(given.end.words == given.words)
        #expect(given.end.outcome == given.outcome)
        let result = AttemptResult(given.end)
        #expect(result.outcome == given.outcome)
        #expect(result.exitCode == given.exitCode)
        #expect(result.signal == given.signal)
    }

    /// A success is recorded without a reason; every other end with its words.
    @Test func onlyASuccessIsRecordedWithoutAReason() {
        #expect(AttemptEnd.succeeded.recordedReason == nil)
        #expect(AttemptEnd.exited(1).recordedReason == "exit:1")
    }

    /// A shell job that exited 0 keeps its exit code whatever the end says.
    @Test func aGivenExitCodeIsKept() {
        let refused = AttemptResult(.refused(.malformedOutput(line: 1, text: "x")), exitCode: 0)
        #expect(refused.exitCode == 0)
        #expect(refused.outcome == .failed)
    }

    /// Masking reaches every text an end carries from elsewhere, and nothing it words itself.
    @Test func masksEveryTextItCarries() {
        let mask: (String) -> String = { $0.replacingOccurrences(of: "s3cret", with: "***") }
        #expect(AttemptEnd.pluginFailed("bad s3cret").mappingTexts(mask).words == "bad ***")
        #expect(AttemptEnd.skipped("s3cret").mappingTexts(mask).words == "***")
        #expect(
            AttemptEnd.crashed(.init(.perAttempt, .exited(1), lastOutput: "s3cret")).mappingTexts(mask).words
                == "the plugin's process exited 1: ***")
        #expect(
            AttemptEnd.cannotStart(.command("s3cret: not found")).mappingTexts(mask).words
                == "cannot start: ***: not found")
        #expect(AttemptEnd.exited(2).mappingTexts(mask) == .exited(2))
    }
}
