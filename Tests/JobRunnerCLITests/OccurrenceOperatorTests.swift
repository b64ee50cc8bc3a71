import Foundation
import Glibc
import Testing

/// `retry`, `skip` and `cancel` of periodic jobs on the built binary (SPEC 5.12): they act on the
/// job's latest occurrence, through a live `serve` or, with none, on the stored run; an id that
/// names no job says so. Before, each said `run … has no job 'flaky'` and exited 1.
@Suite struct OccurrenceOperatorTests {
    static let jobs = """
        jobs:
          flaky:
            every: 1h
            run: test -f ../ok
          slow:
            every: 1h
            run: |
              touch ../slow-running
              sleep 600
        """

    @Test func retryAndCancelActOnTheLatestOccurrenceUnderServe() async throws {
        let workspace = try Workspace(files: ["jobs.yaml": Self.jobs])
        let out = Pipe()
        let serve = try workspace.start(["serve", "jobs", "--progress", "plain"], stdout: out)
        defer { if serve.isRunning { kill(serve.processIdentifier, SIGKILL) } }
        let lines = LineReader(out)
        let exit = ExitWatcher(serve)
        #expect(await lines.waitFor("failed      flaky @ "), "\(lines.all)")
        #expect(await lines.waitFor("started     slow @ "), "\(lines.all)")

        _ = FileManager.default.createFile(atPath: workspace.root + "/ok", contents: nil)
        let retry = try await workspace.run("retry", "flaky")
        #expect(retry.status == 0, "\(retry.stderr)")
        // The runner's own answer about the occurrence.
        #expect(retry.stdout.hasPrefix("occurrence "), "\(retry.stdout)")
        #expect(retry.stdout.contains(": flaky gets another chance, with any jobs it blocked"), "\(retry.stdout)")
        #expect(await lines.waitFor("succeeded   flaky @ "), "\(lines.all)")

        let cancel = try await workspace.run("cancel", "slow")
        #expect(cancel.status == 0, "\(cancel.stderr)")
        #expect(cancel.stdout.contains("slow (occurrence "), "\(cancel.stdout)")
        #expect(cancel.stdout.contains(") cancelled: the runner (pid"), "\(cancel.stdout)")
        #expect(await lines.waitFor("cancelled   slow @ "), "\(lines.all)")

        let unknown = try await workspace.run("skip", "flaxy")
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no job 'flaxy'; did you mean 'flaky'?"), "\(unknown.stderr)")

        kill(serve.processIdentifier, SIGTERM)
        #expect(await exit.wait() == 0)
        let status = try await workspace.run("status").stdout
        #expect(status.contains("flaky: last succeeded"), "\(status)")
        #expect(status.contains("slow: last failed"), "\(status)")
    }

    @Test func retryFailedWithNoRunnerReopensAFailedOccurrenceForTheNextRunner() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml":
                "jobs:\n  build:\n    run: \"true\"\n  flaky:\n    every: 1h\n    run: echo beat; test -f ../ok\n"
        ])
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 1)
        let retry = try await workspace.run("retry", "--failed")
        #expect(retry.status == 0, "\(retry.stderr)")
        #expect(retry.stdout.contains("flaky gets another chance"), "\(retry.stdout)")
        #expect(retry.stdout.contains("the next `jobrunner serve` or `jobrunner run` resumes occurrence"))
        _ = FileManager.default.createFile(atPath: workspace.root + "/ok", contents: nil)
        let again = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(again.status == 0, "\(again.stdout)")
        #expect(again.stdout.contains("(attempt 2)"), "\(again.stdout)")

        // `logs JOB` of a periodic job needs no `--run`; `runs --job` lists one job's runs.
        let logs = try await workspace.run("logs", "flaky")
        #expect(logs.status == 0, "\(logs.stderr)")
        #expect(logs.stdout == "beat\n", "\(logs.stderr)")
        let runs = try await workspace.run("runs", "--job", "flaky", "--json").stdout.split(separator: "\n")
        #expect(runs.count == 1, "\(runs)")
        #expect(runs.allSatisfy { $0.contains(#""occurrenceOf": "flaky""#) }, "\(runs)")
        let builds = try await workspace.run("runs", "--job", "build", "--json").stdout.split(separator: "\n")
        #expect(builds.count == 2, "the two runs of one-shot jobs: \(builds)")
    }
}
