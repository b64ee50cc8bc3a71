import Foundation
import Testing

/// How an in-process plugin call ends early, on the built binary: a stop ends it at once as
/// `interrupted` and the next run calls it again; a timeout ends it as `timeout` while the
/// handler is left running. Both say what they say on every other way an attempt runs. (The
/// runner starts these calls without a task of its own.)
@Suite(.serialized) struct InProcessEndingTests {
    @Test func aStopEndsAHangingCallAtOnceAndTheNextRunCallsItAgain() async throws {
        let workspace = try Workspace(files: [
            "hang.yaml": """
            jobs:
              quick:
                plugin: noop.ok
              hang:
                plugin: testkit.sleep
                with: { seconds: 600 }
            """
        ])
        let out = Pipe()
        let runner = try workspace.start(["run", "jobs", "--events", "-"], stdout: out)
        let events = LineReader(out)
        #expect(await events.waitFor("\"job\": \"hang\", \"attempt\": 1, \"event\": \"started\""))
        // The quick call ends by itself first (on a loaded machine it may still run when the
        // hanging one starts): only the hanging one is stopped.
        #expect(await events.waitFor("\"job\": \"quick\", \"attempt\": 1, \"event\": \"succeeded\""))
        kill(runner.processIdentifier, SIGTERM)
        #expect(await waitForExit(runner) == 143)
        let interrupted = events.all.filter { $0.contains("\"event\": \"interrupted\"") }
        #expect(interrupted.count == 1)
        #expect(interrupted.first?.contains("\"job\": \"hang\"") == true)
        #expect(interrupted.first?.contains("\"reason\": \"the runner stopped\"") == true, "\(interrupted)")
        let jobs = try await workspace.statusJobs()
        #expect(jobs["quick"]?["state"] as? String == "succeeded")
        #expect(jobs["hang"]?["state"] as? String == "waiting")

        let again = Pipe()
        let second = try workspace.start(["run", "jobs", "--events", "-"], stdout: again)
        let resumed = LineReader(again)
        #expect(await resumed.waitFor("\"job\": \"hang\", \"attempt\": 2, \"event\": \"started\""))
        kill(second.processIdentifier, SIGTERM)
        #expect(await waitForExit(second) == 143)
    }

    @Test func aTimeoutEndsTheAttemptAndLeavesTheHandlerRunning() async throws {
        let workspace = try Workspace(files: [
            "slow.yaml": """
            jobs:
              slow:
                plugin: testkit.sleep
                with: { seconds: 600 }
                timeout: 300ms
              after:
                needs: [slow]
                plugin: noop.ok
            """
        ])
        let run = try await workspace.run(["run", "jobs", "--events", "-"], environment: [:])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let failed = run.stdout.split(separator: "\n").filter { $0.contains("\"event\": \"failed\"") }
        #expect(failed.count == 1)
        #expect(
            failed.first?.contains("\"reason\": \"timeout after 300ms\"") == true, "\(failed)")
        let jobs = try await workspace.statusJobs()
        #expect(jobs["slow"]?["state"] as? String == "failed")
        #expect(jobs["after"]?["state"] as? String == "blocked")
    }
}
