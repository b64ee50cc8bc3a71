import Foundation
import Glibc
import Testing

/// What `logs` and `status` say about periodic jobs, whose occurrences are runs of their own:
/// an occurrence skipped without an attempt, and a periodic job asked for in the run of
/// one-shot jobs.
@Suite struct OccurrenceMessagesTests {
    @Test func aSkippedOccurrenceAndAPeriodicJobAreExplained() async throws {
        let workspace = try Workspace(files: [
            "hb.yaml": """
            jobs:
              once:
                run: echo once
              hb:
                every: 1s
                overlap: skip
                run: echo beat; sleep 1.5
            """
        ])
        let out = Pipe()
        let serve = try workspace.start(["serve", "jobs", "--progress", "plain"], stdout: out)
        defer { if serve.isRunning { kill(serve.processIdentifier, SIGKILL) } }
        let lines = LineReader(out)
        let watcher = ExitWatcher(serve)
        #expect(await lines.waitFor("skipped     hb @ "))
        kill(serve.processIdentifier, SIGTERM)
        #expect(await watcher.wait() == 0)

        let runs = try await workspace.run("runs", "--json").stdout.split(separator: "\n")
            .compactMap { try? statusJSON(String($0)) }
        let skipped = try #require(
            runs.first { $0["occurrenceOf"] as? String == "hb" && $0["state"] as? String == "skipped" }?["id"]
                as? String)

        let logs = try await workspace.run("logs", "hb", "--run", skipped)
        #expect(logs.status == 1)
        #expect(logs.stderr.contains("occurrence \(skipped) of hb (due "), "\(logs.stderr)")
        #expect(logs.stderr.contains("was skipped"), "\(logs.stderr)")
        #expect(logs.stderr.contains("no attempt and no log"), "\(logs.stderr)")
        #expect(!logs.stderr.contains("did you mean"), "\(logs.stderr)")
        let all = try await workspace.run("logs", "--run", skipped)
        #expect(all.status == 1)
        #expect(all.stderr.contains("occurrence \(skipped) of hb (due "), "\(all.stderr)")

        let status = try await workspace.run("status", "--run", skipped).stdout
        #expect(status.contains("was skipped"), "\(status)")
        #expect(status.contains("\npipelines: none\n"), "\(status)")
        #expect(status.contains("periodic jobs:\n  hb: "), "\(status)")

        // The run of one-shot jobs has no `hb`: its latest occurrence that ran is shown (SPEC
        // 5.12; before, `logs hb` refused without `--run`).
        let current = try await workspace.run("logs", "hb")
        #expect(current.status == 0, "\(current.stderr)")
        #expect(current.stdout.contains("beat"), "\(current.stdout)")
        // Asked for in a run of one-shot jobs by `--run`, it is named.
        let latest = try #require(
            runs.filter { $0["occurrenceOf"] as? String == "hb" && $0["state"] as? String != "skipped" }
                .max { ($0["scheduledAt"] as? String ?? "") < ($1["scheduledAt"] as? String ?? "") }?["id"]
                as? String)
        // The run of one-shot jobs, among many occurrences of an `every: 1s` job.
        let oneShotRun = try #require(
            try await workspace.run("runs", "--job", "once", "--json").stdout.split(separator: "\n")
                .compactMap { try? statusJSON(String($0)) }.first?["id"] as? String)
        let inOneShot = try await workspace.run("logs", "hb", "--run", oneShotRun)
        #expect(inOneShot.status == 1)
        #expect(inOneShot.stderr.contains("has no job 'hb': it is periodic"), "\(inOneShot.stderr)")
        #expect(inOneShot.stderr.contains("the latest that ran is \(latest) "), "\(inOneShot.stderr)")

        // `periodic` is the same whichever run is shown.
        for arguments in [["status", "--json"], ["status", "--json", "--run", skipped]] {
            let json = try statusJSON(try await workspace.run(arguments, environment: [:]).stdout)
            let periodic = try #require(json["periodic"] as? [[String: Any]])
            #expect(periodic.map { $0["id"] as? String } == ["hb"], "\(arguments)")
        }
    }
}
