import Foundation
import Glibc
import Testing

/// `notify:` hooks on the built binary (SPEC 5.13): what a hook gets, where its output is kept,
/// bad definitions refused where they stand, and a hook that fell due delivered after the
/// runner was killed with SIGKILL before it ended.
@Suite struct NotifyTests {
    @Test func aFailedRunsHookGetsItsRunAndSummaryWithSecretsMasked() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            secrets: [TOKEN]
            notify:
              ops:
                run: 'echo "run=$JOBRUNNER_NOTIFY_RUN state=$JOBRUNNER_NOTIFY_STATE job=[$JOBRUNNER_NOTIFY_JOB] failed=$JOBRUNNER_NOTIFY_FAILED token=$TOKEN"; grep -c "\\"id\\":\\"build\\"" "$JOBRUNNER_NOTIFY_SUMMARY"'
            jobs:
              build:
                run: "false"
              fine:
                run: "true"
            """
        ])
        let run = try await workspace.run(
            ["run", "jobs", "--progress", "plain", "--events", "events.jsonl"],
            environment: ["TOKEN": "s3cret"])
        #expect(run.status == 1, "the hook changes no exit status: \(run.stdout)")
        #expect(run.stdout.contains("notified    ops for run "), "run waited for it: \(run.stdout)")
        let logs = try await workspace.run("logs", "--notify", "ops")
        #expect(logs.status == 0, "\(logs.stderr)")
        #expect(logs.stdout.contains(" state=failed job=[] failed=build token=***\n1\n"), "\(logs.stdout)")
        #expect(logs.stdout.hasPrefix("run=20"), "\(logs.stdout)")
        let events = workspace.read("events.jsonl")
        #expect(
            events.contains(#""event": "notify-started", "hook": "ops""#)
                || events.contains(#""hook": "ops""#))
        #expect(events.contains(#""event": "notify-succeeded""#), "\(events)")
        let status = try await workspace.run("status").stdout
        #expect(status.contains("failed"), "\(status)")
    }

    @Test func badHooksAreLocatedAndNothingRuns() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            notify:
              a:
                jobs: [biuld]
                run: "true"
              b:
                run: "true"
                plugin: mail.send
              c:
                onn: [failure]
                run: "true"
            jobs:
              build:
                run: "true"
            """
        ])
        let validate = try await workspace.run("validate", "jobs")
        #expect(validate.status == 2)
        let text = validate.stdout + validate.stderr
        #expect(text.contains("jobs.yaml:3:12: error: notify hook 'a' names job 'biuld'"), "\(text)")
        #expect(text.contains("did you mean 'build'?"), "\(text)")
        #expect(text.contains("jobs.yaml:5:3: error: notify hook 'b' has both 'run' and 'plugin'"), "\(text)")
        #expect(
            text.contains("jobs.yaml:9:5: error: unknown key 'onn' in notify.c; did you mean 'on'?"),
            "\(text)")
        let run = try await workspace.run("run", "jobs")
        #expect(run.status == 2)
        #expect(!FileManager.default.fileExists(atPath: workspace.state + "/db"), "nothing stored")
    }

    @Test func aHookThatFellDueIsDeliveredAfterTheRunnerIsKilled() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            notify:
              ops:
                jobs: [tick]
                run: |
                  echo start >> ../starts
                  # The first delivery kills its runner, then waits for the test's end.
                  [ -f ../once ] || {
                    touch ../once; kill -9 $PPID
                    while [ ! -f ../release ]; do sleep 0.05; done
                  }
                  echo done >> ../delivered
            jobs:
              tick:
                every: 1h
                run: "false"
            """
        ])
        // Whatever happens, the hooks' processes end: the first runner's is left behind by SIGKILL.
        defer { _ = FileManager.default.createFile(atPath: workspace.root + "/release", contents: nil) }
        let out = Pipe()
        let first = try workspace.start(["serve", "jobs", "--progress", "plain"], stdout: out)
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        let lines = LineReader(out)
        let exit = ExitWatcher(first)
        // The event follows the commit that stored the hook with the occurrence's end.
        #expect(await lines.waitFor("notify      ops for run "), "\(lines.all)")
        // The first delivery kills its runner (SIGKILL to its parent): between the run's end and
        // the hook's end, whenever that is.
        #expect(await exit.wait() == SIGKILL)
        #expect(first.terminationReason == .uncaughtSignal)

        let secondOut = Pipe()
        let second = try workspace.start(["serve", "jobs", "--progress", "plain"], stdout: secondOut)
        defer { if second.isRunning { kill(second.processIdentifier, SIGKILL) } }
        let secondLines = LineReader(secondOut)
        let secondExit = ExitWatcher(second)
        #expect(await secondLines.waitFor("notify      ops for run "), "delivered again: \(secondLines.all)")
        #expect(await secondLines.waitFor("notified    ops for run "), "\(secondLines.all)")
        kill(second.processIdentifier, SIGTERM)
        #expect(await secondExit.wait() == 0)
        #expect(workspace.read("starts").split(separator: "\n").count == 2, "at least once: here twice")
        // Delivered: no longer stored, so a third runner does not run it again.
        let third = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(
            !third.stdout.contains("notify      ops for run \(try #require(firstRun(lines.all)))"),
            "\(third.stdout)")
    }

    /// The run id in the first `notify` line.
    func firstRun(_ lines: [String]) -> String? {
        lines.first { $0.contains("notify      ops for run ") }?.components(separatedBy: "for run ").last
    }
}
