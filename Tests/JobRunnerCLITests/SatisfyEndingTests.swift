import Foundation
import Glibc
import Testing

/// A constraint's `satisfy` that a stop or a runner's death interrupts (SPEC 5.4, 5.6, 5.9): a
/// clean stop leaves the jobs waiting on it without using an attempt, and a runner that starts
/// after one was killed ends the `satisfy` the dead one left before it starts its own.
@Suite(.serialized) struct SatisfyEndingTests {
    /// Sends `signal` to `process` once the file at `path` holds `text`; false, sending nothing,
    /// if it did not within `limit`. The commands under test write the file: nothing can be
    /// awaited. The looks and the signal are on a thread of their own: under a full test run the
    /// concurrency pool may not come back to a task for more than a minute, and a test that
    /// awaited the text and signalled afterwards once let its `satisfy` outlive its time limit
    /// in between (`constraint t failed: timed out after 1m`).
    func send(
        _ signal: Int32, to process: Process, when text: String, in path: String,
        limit: TimeInterval = TestLimits.safetySeconds
    )
        async -> Bool
    {
        let pid = process.processIdentifier
        return await withCheckedContinuation { continuation in
            Thread {
                let deadline = Date().addingTimeInterval(limit)
                var found = false
                // The text, or the process's end (then it never comes): the events awaited.
                while !found && process.isRunning && Date() < deadline {
                    found = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").contains(text)
                    if !found { usleep(20_000) }
                }
                if found { kill(pid, signal) }
                continuation.resume(returning: found)
            }.start()
        }
    }

    // The `satisfy`s sleep far longer, and may run far longer (`timeout: 1h`), than a loaded
    // machine may keep this test from sending its signal (a 30 s sleep once ended by itself first,
    // and the run with it; the default limit of 1m once ended the `satisfy` first).
    @Test func aStopDuringSatisfyLeavesTheJobWaitingAndTheRunResumable() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            constraints:
              t:
                check: test -f ../tok
                timeout: 1h
                satisfy: |
                  echo "start $$" >> ../marks
                  if [ ! -f ../release ]; then sleep 600; fi
                  touch ../tok
            jobs:
              a: { run: echo a, constraints: [t], retry: { attempts: 3 } }
            """
        ])
        let out = Pipe()
        let runner = try workspace.start(["run", "jobs", "--progress", "plain"], stdout: out)
        let lines = LineReader(out)
        defer { if runner.isRunning { kill(runner.processIdentifier, SIGKILL) } }
        #expect(await send(SIGTERM, to: runner, when: "start", in: workspace.root + "/marks"))
        #expect(await waitForExit(runner) == 143)
        #expect(!lines.all.contains { $0.contains("failed") || $0.contains("retrying") }, "\(lines.all)")

        let status = try await statusJSON(workspace.run("status", "--json").stdout)
        #expect((status["run"] as? [String: Any])?["state"] as? String == "stopped")
        let a = try #require(try await workspace.statusJobs()["a"])
        #expect(a["state"] as? String == "waiting")
        #expect(a["reason"] as? String == "constraint:t")
        #expect(a["attempts"] as? Int == 0, "waiting for a constraint uses up no attempt")

        try "go".write(toFile: workspace.root + "/release", atomically: true, encoding: .utf8)
        let resumed = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(resumed.stdout.contains("(resumed)"))
        #expect(workspace.read("marks").split(separator: "\n").count == 2, "satisfy ran again")
        #expect(try await workspace.statusJobs()["a"]?["attempts"] as? Int == 1)
    }

    @Test func theNextRunnerEndsTheSatisfyAKilledOneLeftBeforeItsOwn() async throws {
        // The second `satisfy` (the release file exists by then) says whether the first one's
        // shell still ran when it began: a zombie (nothing may reap it here) counts as ended.
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            constraints:
              t:
                check: test -f ../tok
                timeout: 1h
                satisfy: |
                  echo "start $$" >> ../marks
                  if [ -f ../release ]; then
                    first=$(head -n 1 ../marks | cut -d ' ' -f 2)
                    if grep -qv ') Z' /proc/$first/stat 2>/dev/null; then echo "beside $first" >> ../marks; fi
                    touch ../tok
                    exit 0
                  fi
                  sleep 600
            jobs:
              a: { run: echo a, constraints: [t] }
            """
        ])
        let marks = workspace.root + "/marks"
        let first = try workspace.start(["run", "jobs", "--progress", "none"])
        #expect(await send(SIGKILL, to: first, when: "start", in: marks))
        _ = await waitForExit(first)
        let orphan = workspace.read("marks").split(separator: "\n").first?.split(separator: " ").last
            .flatMap { Int32($0) }
        // Should the runner leave it, it must not outlive the test.
        defer { if let orphan { kill(-orphan, SIGKILL) } }

        try "go".write(toFile: workspace.root + "/release", atomically: true, encoding: .utf8)
        let second = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        let lines = workspace.read("marks").split(separator: "\n").map { $0.split(separator: " ") }
        #expect(lines.map { String($0[0]) } == ["start", "start"], "one satisfy at a time: \(lines)")
    }
}
