import Foundation
import Glibc
import Testing

/// `retry`, `skip` and `cancel` with no runner: they change the stored run themselves, one at a
/// time, and a run they leave with every job final is closed as its runner would close it.
@Suite struct OfflineOperatorTests {
    /// `stubborn` survives SIGTERM (it says so through `term.fifo`), so that a `cancel` without
    /// a runner is still ending it, holding the state directory, while the test acts.
    static let jobs = """
        jobs:
          stubborn:
            run: |
              trap 'echo $$ > ../term.fifo' TERM
              echo $$ > ../start.fifo
              while true; do sleep 1 & wait $!; done
          broken: { run: exit 1 }
        """

    /// A runner killed with SIGKILL leaves `stubborn` running and `broken` failed.
    private func runnerKilledMidRun(_ workspace: borrowing Workspace) async throws -> Int32 {
        #expect(mkfifo(workspace.root + "/start.fifo", 0o600) == 0)
        #expect(mkfifo(workspace.root + "/term.fifo", 0o600) == 0)
        let out = Pipe()
        let runner = try workspace.start(["run", "jobs", "--events", "-", "--progress", "none"], stdout: out)
        defer { if runner.isRunning { kill(runner.processIdentifier, SIGKILL) } }
        let events = LineReader(out)
        let stubborn = try #require(Int32(await readOnce(workspace.root + "/start.fifo").trimmed))
        #expect(await events.waitFor("\"event\": \"failed\""))
        kill(runner.processIdentifier, SIGKILL)
        _ = await waitForExit(runner)
        return stubborn
    }

    /// Two operator commands at once without a runner: the second waits for the first, which
    /// holds the state directory while it ends `stubborn`, then applies its own request. Before,
    /// the second took the first for a runner: it signalled it (which killed it, "User defined
    /// signal 1") and left its own request for a runner that never came.
    @Test func anOperatorCommandWaitsForAnotherInsteadOfSignallingIt() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.jobs])
        let stubborn = try await runnerKilledMidRun(workspace)
        defer { kill(-stubborn, SIGKILL) }

        let (cancelOut, cancelErr) = (Pipe(), Pipe())
        let cancel = try workspace.start(["cancel", "stubborn"], stdout: cancelOut, stderr: cancelErr)
        let cancelled = Task { await finished(cancel, stdout: cancelOut, stderr: cancelErr) }
        // `cancel` sent SIGTERM, which `stubborn` ignores: `cancel` waits out its grace now.
        #expect(Int32(await readOnce(workspace.root + "/term.fifo").trimmed) == stubborn)
        // A runner's wake-up call reaching it by mistake does not kill it.
        kill(cancel.processIdentifier, SIGUSR1)

        let (retryOut, retryErr) = (Pipe(), Pipe())
        let retry = try workspace.start(["retry", "broken"], stdout: retryOut, stderr: retryErr)
        let retryLines = LineReader(retryErr)
        let retried = Task { await finished(retry, stdout: retryOut) }
        #expect(await retryLines.waitFor("waiting for another jobrunner command to finish"))
        kill(-stubborn, SIGKILL)

        let cancelResult = await cancelled.value
        #expect(!cancelResult.signalled, "\(cancelResult)")
        #expect(cancelResult.status == 0, "\(cancelResult)")
        #expect(cancelResult.stdout.contains("stubborn cancelled"), "\(cancelResult.stdout)")
        let retryResult = await retried.value
        #expect(retryResult.status == 0, "\(retryResult) \(retryLines.all)")
        #expect(!retryResult.stdout.contains("asked the runner"), "\(retryResult.stdout)")
        #expect(retryResult.stdout.contains("broken"), "\(retryResult.stdout)")

        let jobs = try await workspace.statusJobs()
        #expect(jobs["stubborn"]?["state"] as? String == "cancelled")
        #expect(jobs["broken"]?["state"] as? String == "pending", "the retry was applied: \(jobs)")
    }

    /// A `skip` without a runner that leaves every job final closes the run, `succeeded` here,
    /// as a runner would have: it no longer waits for a `run` with nothing left to do.
    @Test func anOperatorCommandThatEndsTheLastOpenJobClosesTheRun() async throws {
        let workspace = try Workspace(files: [
            "a.yaml": """
            jobs:
              long: { run: read line < ../long.fifo }
              quick: { run: echo done }
            """
        ])
        #expect(mkfifo(workspace.root + "/long.fifo", 0o600) == 0)
        let out = Pipe()
        let runner = try workspace.start(["run", "jobs", "--events", "-", "--progress", "none"], stdout: out)
        defer { if runner.isRunning { kill(runner.processIdentifier, SIGKILL) } }
        let events = LineReader(out)
        #expect(await events.waitFor("\"job\": \"long\", \"attempt\": 1, \"event\": \"started\""))
        #expect(await events.waitFor("\"job\": \"quick\", \"attempt\": 1, \"event\": \"succeeded\""))
        kill(runner.processIdentifier, SIGKILL)
        _ = await waitForExit(runner)

        let skip = try await workspace.run("skip", "long")
        #expect(skip.status == 0, "\(skip)")
        #expect(skip.stdout.contains("long skipped"), "\(skip.stdout)")
        #expect(skip.stdout.contains("succeeded: every job is final"), "\(skip.stdout)")
        let status = try await workspace.run("status")
        let head = status.stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(head.contains("  succeeded  "), "\(head)")
        #expect(head.contains("finished"), "\(head)")
        #expect(!head.contains("resumes it"), "\(head)")
    }

    /// A stopped run's first line says what comes of it: the next `run` resumes it, unless a
    /// newer run replaced it.
    @Test func aStoppedRunsFirstLineSaysWhatResumesIt() async throws {
        let workspace = try Workspace(files: ["a.yaml": "jobs:\n  long: { run: read line < ../long.fifo }\n"])
        #expect(mkfifo(workspace.root + "/long.fifo", 0o600) == 0)
        let out = Pipe()
        let runner = try workspace.start(["run", "jobs", "--events", "-", "--progress", "none"], stdout: out)
        defer { if runner.isRunning { kill(runner.processIdentifier, SIGKILL) } }
        let events = LineReader(out)
        #expect(await events.waitFor("\"job\": \"long\", \"attempt\": 1, \"event\": \"started\""))
        kill(runner.processIdentifier, SIGTERM)
        #expect(await waitForExit(runner) == 143)

        let first =
            try await workspace.run("status").stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.contains("  stopped  "), "\(first)")
        #expect(first.contains("(no runner: the next `jobrunner run` resumes it)"), "\(first)")
        let runID = try #require(first.split(separator: " ").dropFirst().first.map(String.init))

        try FileManager.default.createDirectory(
            atPath: workspace.root + "/other", withIntermediateDirectories: true)
        try "jobs:\n  quick: { run: echo done }\n".write(
            toFile: workspace.root + "/other/b.yaml", atomically: true, encoding: .utf8)
        #expect(try await workspace.run("run", "other", "--progress", "none").status == 0)
        let old = try await workspace.run("status", "--run", runID).stdout
        let oldFirst = old.split(separator: "\n").first.map(String.init) ?? ""
        #expect(oldFirst.contains("(no runner: a newer run replaced it)"), "\(oldFirst)")
    }
}

extension String {
    fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
