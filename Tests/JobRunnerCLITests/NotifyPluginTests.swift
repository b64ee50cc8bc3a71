import Foundation
import Glibc
import Testing

/// `notify:` hooks that call a plugin's handler (SPEC 5.13: "shell or plugin"): what the handler
/// is told, the same crash safety as a shell hook (due in the commit that finishes the run,
/// delivered at least once across SIGKILL), and bad definitions refused where they stand.
@Suite struct NotifyPluginTests {
    @Test func aPluginHookIsCalledWithTheFinishedRunInItsRequest() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            notify:
              ops:
                plugin: testkit.notified
                with: { file: ../notified }
            jobs:
              build:
                run: "false"
              fine:
                run: "true"
            """
        ])
        let run = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(run.status == 1, "the hook changes no exit status: \(run.stdout)")
        #expect(run.stdout.contains("notified    ops for run "), "run waited for it: \(run.stdout)")
        let line = workspace.read("notified")
        #expect(line.hasPrefix("hook=ops run="), "\(line)")
        #expect(line.hasSuffix(" state=failed job=[] failed=[build] summary=yes\n"), "\(line)")
        let logs = try await workspace.run("logs", "--notify", "ops")
        #expect(logs.stdout.contains("notified about "), "its log is kept: \(logs.stdout) \(logs.stderr)")
    }

    @Test func aPluginHookThatFellDueIsDeliveredAfterTheRunnerIsKilled() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            notify:
              ops:
                jobs: [tick]
                plugin: testkit.notified
                with: { file: ../delivered, waitFor: ../release }
                # Longer than any wait of this test on a loaded machine: the hook must still
                # be under way when the runner is killed (30 s ran out in CI).
                timeout: 1h
            jobs:
              tick:
                every: 1h
                run: "false"
            """
        ])
        let out = Pipe()
        let first = try workspace.start(["serve", "jobs", "--progress", "plain"], stdout: out)
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        let lines = LineReader(out)
        let exit = ExitWatcher(first)
        #expect(await lines.waitFor("notify      ops for run "), "\(lines.all)")
        // The handler has started (on a plugin worker) and waits: the runner dies in between the
        // run's end and the hook's end.
        #expect(await Self.appears(workspace.root + "/delivered.started"))
        kill(first.processIdentifier, SIGKILL)
        #expect(await exit.wait() == SIGKILL)
        #expect(
            !lines.all.contains { $0.hasPrefix("notified    ") || $0.hasSuffix(" failed") },
            "the hook had not ended: \(lines.all)")
        #expect(!FileManager.default.fileExists(atPath: workspace.root + "/delivered"), "not delivered yet")

        _ = FileManager.default.createFile(atPath: workspace.root + "/release", contents: nil)
        let second = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(
            second.stdout.contains("notified    ops for run "),
            "delivered by the next runner: \(second.stdout)")
        let delivered = workspace.read("delivered")
        #expect(delivered.contains(" state=failed job=[tick] failed=[tick] summary=yes\n"), "\(delivered)")
        // Delivered: no longer stored, so a third runner does not deliver it again.
        let third = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(!third.stdout.contains("notify      ops"), "\(third.stdout)")
        #expect(workspace.read("delivered").split(separator: "\n").count == 1)
    }

    @Test func badPluginHooksAreRefusedWhereTheyStand() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            notify:
              both:
                run: "true"
                plugin: testkit.notified
              missing:
                plugin: mailer.send
              typo:
                plugin: testkit.notifed
              params:
                plugin: testkit.notified
                with:
                  file: x
                  wiatFor: y
              shellwith:
                run: "true"
                with: { a: 1 }
            jobs:
              a:
                run: "true"
            """
        ])
        let validate = try await workspace.run("validate", "jobs")
        #expect(validate.status == 2)
        let errors = validate.stderr
        #expect(
            errors.contains("jobs.yaml:2:3: error: notify hook 'both' has both 'run' and 'plugin'"),
            "\(errors)")
        #expect(
            errors.contains("jobs.yaml:6:13: error: notify hook 'missing': plugin 'mailer' not found"),
            "\(errors)")
        #expect(
            errors.contains(
                "jobs.yaml:8:13: error: notify hook 'typo': plugin 'testkit' has no handler 'notifed'")
                && errors.contains("did you mean 'testkit.notified'?"), "\(errors)")
        #expect(
            errors.contains(
                "jobs.yaml:13:7: error: notify hook 'params': with: does not suit testkit.notified: unknown parameter 'wiatFor'"
            ) && errors.contains("did you mean 'waitFor'?"), "\(errors)")
        #expect(
            errors.contains(
                "jobs.yaml:16:5: error: notify hook 'shellwith': with applies to plugin hooks only"),
            "\(errors)")
        #expect(!FileManager.default.fileExists(atPath: workspace.state + "/db"), "nothing stored")
    }

    /// Whether a file appears, looked for until it does (the suite's guard aside).
    static func appears(_ path: String) async -> Bool {
        let deadline = ContinuousClock.now + TestLimits.safety
        while ContinuousClock.now < deadline {
            if FileManager.default.fileExists(atPath: path) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}
