import Foundation
import Glibc
import Testing

/// `jobrunner trigger JOB…` on the built binary (SPEC 5.12): stored for the next runner when
/// none works, started by a live `serve`, refused under `overlap: skip` while an occurrence
/// runs, and refused before anything is stored for a one-shot or unknown id.
@Suite struct TriggerTests {
    static let jobs = """
        jobs:
          build:
            run: "true"
          slow:
            every: 1h
            run: |
              echo started >> ../slow-started
              while [ ! -f ../release ]; do sleep 0.05; done
              rm -f ../release
        """

    /// The occurrences of `job` in `runs --json`, each as (scheduledAt, manual).
    func occurrences(_ job: String, in workspace: borrowing Workspace) async throws -> [(String, Bool)] {
        let lines = try await workspace.run("runs", "--json", "--limit", "100").stdout.split(separator: "\n")
        return try lines.compactMap { line in
            let object = try statusJSON(String(line))
            guard object["occurrenceOf"] as? String == job else { return nil }
            return (object["scheduledAt"] as? String ?? "", object["manual"] as? Bool ?? false)
        }
    }

    @Test func withNoRunnerATriggerIsStoredAndTheNextRunStartsIt() async throws {
        let workspace = try Workspace(files: ["jobs.yaml": Self.jobs])
        _ = FileManager.default.createFile(atPath: workspace.root + "/release", contents: nil)
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 0)
        #expect(try await occurrences("slow", in: workspace).map(\.1) == [false])

        let unknown = try await workspace.run("trigger", "slwo")
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no periodic job 'slwo'; did you mean 'slow'?"), "\(unknown.stderr)")
        let oneShot = try await workspace.run("trigger", "build")
        #expect(oneShot.status == 1)
        #expect(oneShot.stderr.contains("build is a one-shot job"), "\(oneShot.stderr)")

        let stored = try await workspace.run("trigger", "slow")
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(stored.stdout.contains("the next `jobrunner serve` or `jobrunner run` starts slow first"))
        _ = FileManager.default.createFile(atPath: workspace.root + "/release", contents: nil)
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 0)
        let after = try await occurrences("slow", in: workspace)
        #expect(after.map(\.1).sorted { !$0 && $1 } == [false, true], "one manual occurrence more: \(after)")
    }

    @Test func liveServeStartsATriggerAndSkipRefusesOneWhileAnOccurrenceRuns() async throws {
        let workspace = try Workspace(files: ["jobs.yaml": Self.jobs])
        let out = Pipe()
        let serve = try workspace.start(["serve", "jobs", "--progress", "plain"], stdout: out)
        defer { if serve.isRunning { kill(serve.processIdentifier, SIGKILL) } }
        let lines = LineReader(out)
        let exit = ExitWatcher(serve)
        #expect(await lines.waitFor("started     slow"), "\(lines.all)")

        let refused = try await workspace.run("trigger", "slow")
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains("cannot trigger slow: an occurrence of slow still runs (overlap: skip)"),
            "\(refused.stderr)")
        #expect(await lines.waitFor("skipped     slow @ "), "\(lines.all)")

        _ = FileManager.default.createFile(atPath: workspace.root + "/release", contents: nil)
        #expect(await lines.waitFor("succeeded   slow"), "\(lines.all)")
        let triggered = try await workspace.run("trigger", "slow")
        #expect(triggered.status == 0, "\(triggered.stderr)")
        #expect(triggered.stdout.contains("triggered slow: occurrence"), "\(triggered.stdout)")
        #expect(await lines.waitFor("started     slow", times: 2), "\(lines.all)")
        #expect(try await occurrences("slow", in: workspace).map(\.1).sorted { !$0 && $1 } == [false, true])

        _ = FileManager.default.createFile(atPath: workspace.root + "/release", contents: nil)
        #expect(await lines.waitFor("succeeded   slow", times: 2), "\(lines.all)")
        kill(serve.processIdentifier, SIGTERM)
        #expect(await exit.wait() == 0)
    }

    @Test func withNoRunnerATriggerBehindAReopenedOccurrenceIsRefusedAtOnceAndStatusShowsStoredOnes()
        async throws
    {
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            jobs:
              flaky:
                every: 1h
                run: test -f ../fixed
              slow:
                every: 1h
                run: "true"
            """
        ])
        _ = try await workspace.run("run", "jobs", "--progress", "none")
        // `retry` with no runner reopens flaky's failed occurrence: the next runner resumes it
        // first, and under overlap: skip would refuse a trigger then. Said now, not stored.
        let retry = try await workspace.run("retry", "flaky")
        #expect(retry.status == 0, "\(retry.stderr)")
        let refused = try await workspace.run("trigger", "flaky")
        #expect(refused.status == 1, "\(refused.stdout)")
        #expect(refused.stderr.contains("cannot trigger flaky: occurrence "), "\(refused.stderr)")
        #expect(refused.stderr.contains("under overlap: skip"), "\(refused.stderr)")
        // A trigger that is stored shows in `status` until a runner takes it.
        #expect(try await workspace.run("trigger", "slow").status == 0)
        let status = try await workspace.run("status")
        #expect(status.stdout.contains("pending requests (stored for the next"), "\(status.stdout)")
        #expect(status.stdout.contains("  trigger slow, asked "), "\(status.stdout)")
        #expect(!status.stdout.contains("trigger flaky"), "\(status.stdout)")
        let json = try statusJSON(try await workspace.run("status", "--json").stdout)
        let pending = try #require(json["pendingRequests"] as? [[String: Any]])
        #expect(pending.map { $0["job"] as? String } == ["slow"])
    }

    @Test func periodicJobsAloneKeepOneEmptyRunOfOneShotJobsAcrossStarts() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml": "jobs:\n  tick:\n    every: 1h\n    run: \"true\"\n"
        ])
        for _ in 0..<3 { #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 0) }
        let lines = try await workspace.run("runs", "--json").stdout.split(separator: "\n")
        let oneShot = try lines.map { try statusJSON(String($0)) }.filter { $0["occurrenceOf"] is NSNull }
        #expect(oneShot.count == 1, "\(lines)")
    }
}
