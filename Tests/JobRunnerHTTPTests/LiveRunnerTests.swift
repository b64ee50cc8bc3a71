import Foundation
import Testing

/// The dashboard of `run --http`: it serves while the run works, asks the runner of its own
/// process to act, as `jobrunner cancel` from another would, and ends with the run.
@Suite(.serialized) struct LiveRunnerTests {
    static let jobs = """
        version: 1
        jobs:
          waits:
            run: |
              echo waiting
              while [ ! -f never ]; do sleep 0.05; done
          next:
            needs: [waits]
            run: echo next
        """

    @Test func actionsReachTheRunnerOfTheProcessAndTheServerEndsWithTheRun() async throws {
        let place = try Place(files: ["main.yaml": Self.jobs])
        let server = try await place.listen(["run", place.jobs, "--progress", "none", "--http", "0"])
        // The job is running once the event stream says so.
        let events = try await readEvents(port: server.port, headers: ["Last-Event-ID": "0"]) {
            $0.contains("\"job\": \"waits\", \"attempt\": 1, \"event\": \"started\"")
        }
        #expect(events.contains("event: started"))
        // A client that follows the events to the end: its stream must not keep the server up.
        let follower = Task { try await readEvents(port: server.port) { _ in false } }
        _ = try await readEvents(port: server.port) { $0.contains(": jobrunner events") }
        let id = try await DashboardEndToEndTests.runID(server.port)
        // The runner's own metrics: the attempt under way, and its commits timed.
        let metrics = try await request(server.port, "GET", "/metrics")
        #expect(
            metrics.body.contains("jobrunner_attempts_running{pipeline=\"default\"} 1"), "\(metrics.body)")
        #expect(metrics.body.contains("jobrunner_attempt_queue_wait_seconds_count{pipeline=\"default\"} 1"))
        #expect(!metrics.body.contains("jobrunner_store_commit_seconds_count 0\n"))
        // Every metric has its help text, the commit latency too.
        #expect(metrics.body.contains("# HELP jobrunner_store_commit_seconds "), "\(metrics.body)")
        let typed = metrics.body.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map {
            $0.split(separator: " ")[2]
        }
        for name in typed { #expect(metrics.body.contains("# HELP \(name) "), "\(name) has no # HELP") }
        // The runner refuses a retry of a running job: the API says so, as the command does,
        // with the runner's own words (it used to answer 200, "asked the runner").
        let retry = try await request(server.port, "POST", "/api/v1/runs/\(id)/jobs/waits/retry")
        #expect(retry.status == 409, "\(retry.body)")
        #expect(
            retry.body.contains("cannot retry waits: waits is running; only a failed, blocked or cancelled"),
            "\(retry.body)")
        let command = try await place.run(["retry", "waits"])
        #expect(command.status == 1)
        #expect(command.stderr.contains("cannot retry waits: waits is running"), "\(command.stderr)")
        let skipWaiting = try await request(server.port, "POST", "/api/v1/runs/\(id)/jobs/next/retry")
        #expect(skipWaiting.status == 409, "\(skipWaiting.body)")
        let cancel = try await request(server.port, "POST", "/api/v1/runs/\(id)/jobs/waits/cancel")
        #expect(cancel.status == 200, "\(cancel.body)")
        #expect(cancel.body.contains("waits cancelled: the runner (pid"), "\(cancel.body)")
        // The run ends (cancelled, its dependent blocked) and the dashboard with it.
        #expect(await server.exitStatus() == 1)
        let followed = try await follower.value
        #expect(followed.contains("event: cancelled"), "\(followed)")
        #expect(throws: (any Error).self) { try connect(port: server.port) }
    }
}
