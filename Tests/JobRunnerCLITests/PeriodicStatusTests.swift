import Foundation
import Glibc
import Testing

/// `status` of periodic jobs (SPEC 5.12): each job's occurrence under way (running or waiting,
/// and why), its last result and next date, and plainly when no runner serves the state
/// directory; `status --json` has the same (`underWay`, `runnerPID`). Before, it showed only the
/// last result and the next date.
@Suite struct PeriodicStatusTests {
    @Test func statusShowsTheOccurrenceUnderWayAndWhetherARunnerServes() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            jobs:
              slow:
                every: 1h
                run: sleep 600
            """
        ])
        let out = Pipe()
        let serve = try workspace.start(["serve", "jobs", "--progress", "plain"], stdout: out)
        defer { if serve.isRunning { kill(serve.processIdentifier, SIGKILL) } }
        let lines = LineReader(out)
        let exit = ExitWatcher(serve)
        #expect(await lines.waitFor("started     slow @ "), "\(lines.all)")

        let status = try await workspace.run("status").stdout
        #expect(status.contains("  slow: running (slow @ "), "\(status)")
        #expect(status.contains(", attempt 1); no occurrence finished yet; next due "), "\(status)")
        #expect(!status.contains("no runner is serving"), "\(status)")
        let json = try statusJSON(try await workspace.run("status", "--json").stdout)
        #expect(json["runnerPID"] as? Int == Int(serve.processIdentifier))
        let periodic = try #require((json["periodic"] as? [[String: Any]])?.first)
        let underWay = try #require(periodic["underWay"] as? [String: Any])
        #expect(underWay["state"] as? String == "running")
        #expect(underWay["manual"] as? Bool == false)

        kill(serve.processIdentifier, SIGTERM)
        #expect(await exit.wait() == 0)
        let stopped = try await workspace.run("status").stdout
        #expect(
            stopped.contains(
                "no runner is serving this state directory: periodic jobs fire only while `jobrunner serve` runs"
            ),
            "\(stopped)")
        #expect(
            stopped.contains("  slow: interrupted; "),
            "the stopped occurrence waits for the next runner: \(stopped)")
        let after = try statusJSON(try await workspace.run("status", "--json").stdout)
        #expect(after["runnerPID"] is NSNull)
    }
}
