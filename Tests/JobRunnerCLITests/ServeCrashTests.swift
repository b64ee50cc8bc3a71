import Foundation
import Glibc
import Testing

/// Kills `serve` with SIGKILL at random moments while occurrences fire, restarts it each time,
/// and checks that no occurrence was lost or done twice: the stored occurrences of the job are
/// exactly one per second from the first, each recorded once, and every occurrence whose
/// attempt started is one of them.
@Suite struct ServeCrashTests {
    // A slow machine lets more than the default 100 occurrences finish during the test: keep
    // them all, or the oldest are pruned and their attempts look unknown to the store.
    static let jobs = """
        retention: { runs: 100000 }
        jobs:
          tick:
            every: 1s
            overlap: skip
            run: |
              echo "start $JOBRUNNER_RUN $JOBRUNNER_ATTEMPT" >> ../marks
              sleep 0.4
              echo "end $JOBRUNNER_RUN $JOBRUNNER_ATTEMPT" >> ../marks
        """

    @Test func occurrencesSurviveSigkillAtRandomMoments() async throws {
        let workspace = try Workspace(files: ["serve.yaml": Self.jobs])
        var random = SystemRandomNumberGenerator()
        var kills = 0
        for _ in 0..<8 {
            let serve = try workspace.start(["serve", "jobs", "--progress", "none"])
            let watcher = ExitWatcher(serve)
            // A random moment: the point is an arbitrary kill time, not waiting for something.
            if await watcher.wait(atMost: .milliseconds(UInt64.random(in: 700...1900, using: &random))) != nil
            {
                break
            }
            kill(serve.processIdentifier, SIGKILL)
            if await watcher.wait() == SIGKILL { kills += 1 }
        }
        // A last, clean life.
        let out = Pipe()
        let serve = try workspace.start(["serve", "jobs", "--progress", "plain"], stdout: out)
        defer { if serve.isRunning { kill(serve.processIdentifier, SIGKILL) } }
        let lines = LineReader(out)
        let watcher = ExitWatcher(serve)
        #expect(await lines.waitFor("succeeded   tick", times: 2))
        kill(serve.processIdentifier, SIGTERM)
        #expect(await watcher.wait() == 0)
        #expect(kills >= 4, "serve was killed \(kills) times")

        let runs = try await workspace.run("runs", "--json", "--limit", "10000").stdout.split(separator: "\n")
            .compactMap { try? statusJSON(String($0)) }
            .filter { $0["occurrenceOf"] as? String == "tick" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let dates = runs.compactMap { ($0["scheduledAt"] as? String).flatMap(formatter.date(from:)) }.sorted()
        #expect(dates.count == runs.count)
        #expect(Set(dates).count == dates.count, "an occurrence recorded twice")
        for (earlier, later) in zip(dates, dates.dropFirst()) {
            #expect(
                abs(later.timeIntervalSince(earlier) - 1) < 0.002,
                "every second from the first, none lost: \(earlier) -> \(later)")
        }
        let ids = Set(runs.compactMap { $0["id"] as? String })
        let started = Set(
            workspace.read("marks").split(separator: "\n").compactMap { line -> String? in
                let parts = line.split(separator: " ")
                return parts.count == 3 && parts[0] == "start" ? String(parts[1]) : nil
            })
        #expect(!started.isEmpty)
        #expect(started.isSubset(of: ids), "an attempt ran for an occurrence the store does not know")
        let unfinished = runs.filter { ["running", "stopped"].contains($0["state"] as? String ?? "") }
        #expect(unfinished.count <= 1, "only the last life's running occurrence may be left: \(unfinished)")
    }
}
