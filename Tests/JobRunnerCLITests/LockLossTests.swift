import Foundation
import Glibc
import Testing

/// What a live runner does when the files that say it works are taken from it: a deleted
/// `runner.lock` (its pid file) must not hide it from operator commands, and a state directory
/// deleted under it stops it with a sentence rather than let a second runner start beside it.
@Suite struct LockLossTests {
    static let jobs = """
        pipelines:
          p: { maxConcurrent: 1 }
        jobs:
          long: { run: read line < ../long.fifo, pipeline: p }
          next: { run: echo next, pipeline: p }
        """

    @Test func aRunnerWhosePidFileWasDeletedStillTakesOperatorRequests() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.jobs])
        #expect(mkfifo(workspace.root + "/long.fifo", 0o600) == 0)
        let out = Pipe()
        let runner = try workspace.start(["run", "jobs", "--events", "-"], stdout: out)
        defer { if runner.isRunning { kill(runner.processIdentifier, SIGTERM) } }
        let events = LineReader(out)
        #expect(await events.waitFor("\"job\": \"long\", \"attempt\": 1, \"event\": \"started\""))

        // The README says deleting it is harmless.
        try FileManager.default.removeItem(atPath: workspace.state + "/runner.lock")
        let suspend = try await workspace.run("suspend", "p")
        #expect(suspend.status == 0)
        // The runner reads the store every second: the suspension reaches it without a signal.
        #expect(await events.waitFor("\"event\": \"suspended\", \"pipeline\": \"p\""))

        // It writes its pid file again, so the next command finds it and signals it.
        #expect(await fileAppears(workspace.state + "/runner.lock"))
        let pid = workspace.read("state/runner.lock").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(pid == "\(runner.processIdentifier)")

        let gate = try #require(FileHandle(forWritingAtPath: workspace.root + "/long.fifo"))
        try gate.write(contentsOf: Data("go\n".utf8))
        try gate.close()
        #expect(await events.waitFor("\"job\": \"long\", \"attempt\": 1, \"event\": \"succeeded\""))
        #expect(try await workspace.statusJobs()["next"]?["reason"] as? String == "suspended")
        #expect(try await workspace.run("resume", "p").status == 0)
        #expect(await ExitWatcher(runner).wait() == 0)
        #expect(
            events.all.contains { $0.contains("\"job\": \"next\", \"attempt\": 1, \"event\": \"succeeded\"") }
        )
    }

    @Test func aRunnerWhoseStateDirectoryIsDeletedStopsWithASentence() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.jobs])
        #expect(mkfifo(workspace.root + "/long.fifo", 0o600) == 0)
        let out = Pipe()
        let err = Pipe()
        let runner = try workspace.start(["run", "jobs", "--events", "-"], stdout: out, stderr: err)
        defer { if runner.isRunning { kill(runner.processIdentifier, SIGKILL) } }
        let events = LineReader(out)
        let errors = LineReader(err)
        #expect(await events.waitFor("\"job\": \"long\", \"attempt\": 1, \"event\": \"started\""))

        try FileManager.default.removeItem(atPath: workspace.state)
        #expect(await errors.waitFor("was deleted or replaced while this runner worked on it"))
        #expect(await ExitWatcher(runner).wait() == 3)
        // Its job was ended with it: nothing is left reading the FIFO.
        #expect(!events.all.contains { $0.contains("\"job\": \"next\"") && $0.contains("started") })
    }

    /// Waits for a file to exist (the runner checks once a second), looking every 20 ms.
    private func fileAppears(_ path: String, limit: Duration = TestLimits.safety) async -> Bool {
        let end = ContinuousClock.now + limit
        while ContinuousClock.now < end {
            if FileManager.default.fileExists(atPath: path) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}
