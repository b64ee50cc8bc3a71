import Foundation
import Glibc
import Testing

/// `jobrunner serve` on the built binary, with real time: occurrences fire, a changed file and
/// SIGHUP reload it, a reload with errors keeps the last good definitions, SIGTERM stops it
/// cleanly with exit 0.
@Suite struct ServeTests {
    static let jobs = """
        jobs:
          tick:
            every: 1s
            run: echo tick >> ../fired
        """

    @Test func firesReloadsAndStopsCleanly() async throws {
        let workspace = try Workspace(files: ["serve.yaml": Self.jobs])
        let out = Pipe()
        let errors = Pipe()
        let serve = try workspace.start(
            ["serve", "jobs", "--progress", "plain"], stdout: out, stderr: errors)
        let lines = LineReader(out)
        let problems = LineReader(errors)
        let exit = ExitWatcher(serve)
        #expect(await lines.waitFor("succeeded   tick", times: 2), "\(lines.all)")

        // A bad edit: printed, located, and the last good definitions go on firing.
        try "jobs:\n  tick:\n    every: soon\n    run: echo tick\n".write(
            toFile: workspace.jobs + "/serve.yaml", atomically: true, encoding: .utf8)
        #expect(await problems.waitFor("serve.yaml:3:12: error:"), "\(problems.all)")
        #expect(await problems.waitFor("1 error; nothing was reloaded"), "\(problems.all)")
        #expect(await problems.waitFor("the last good definitions keep running"))
        let before = lines.all.filter { $0.contains("succeeded   tick") }.count
        #expect(await lines.waitFor("succeeded   tick", times: before + 1), "still firing")

        // A good edit: a new job is scheduled.
        try (Self.jobs + "\n  tock:\n    every: 1s\n    run: \"true\"\n").write(
            toFile: workspace.jobs + "/serve.yaml", atomically: true, encoding: .utf8)
        #expect(await problems.waitFor("reloaded 2 jobs"), "\(problems.all)")
        #expect(await lines.waitFor("succeeded   tock"))

        // SIGHUP reloads at once.
        kill(serve.processIdentifier, SIGHUP)
        #expect(await problems.waitFor("reloaded 2 jobs", times: 2))

        kill(serve.processIdentifier, SIGTERM)
        #expect(await exit.wait() == 0, "a clean stop exits 0")

        let runs = try await workspace.run("runs", "--json", "--limit", "1000").stdout.split(separator: "\n")
        let scheduled = runs.compactMap { line -> String? in
            guard let object = try? statusJSON(String(line)), object["occurrenceOf"] as? String == "tick"
            else {
                return nil
            }
            return object["scheduledAt"] as? String
        }
        #expect(scheduled.count >= 3)
        #expect(Set(scheduled).count == scheduled.count, "no occurrence twice")
    }

    @Test func aSecondRunnerIsRefusedBesideServe() async throws {
        let workspace = try Workspace(files: ["serve.yaml": Self.jobs])
        let out = Pipe()
        let serve = try workspace.start(["serve", "jobs", "--progress", "plain"], stdout: out)
        defer { if serve.isRunning { kill(serve.processIdentifier, SIGKILL) } }
        let lines = LineReader(out)
        let exit = ExitWatcher(serve)
        #expect(await lines.waitFor("succeeded   tick"))
        let second = try await workspace.run("run", "jobs")
        #expect(second.status == 3)
        #expect(second.stderr.contains("pid \(serve.processIdentifier)"), "\(second.stderr)")
        let status = try await workspace.run("status")
        #expect(status.status == 0)
        // `tick: last succeeded`, or `tick: running (…); last succeeded` while an occurrence runs.
        #expect(status.stdout.contains("tick: "), "\(status.stdout)")
        #expect(status.stdout.contains("last succeeded (run "), "\(status.stdout)")
        kill(serve.processIdentifier, SIGINT)
        #expect(await exit.wait() == 0)
    }
}
