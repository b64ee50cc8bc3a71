import Foundation
import Testing

/// One `satisfy` at a time per constraint (SPEC 5.6) holds across the runs a runner keeps: the
/// run of one-shot jobs and a periodic occurrence waiting on the same constraint share it.
@Suite struct SharedSatisfyTests {
    @Test func theOneShotRunAndAnOccurrenceShareOneSatisfyAndBothShowItsOutput() async throws {
        // The satisfy goes on only once the test has seen both jobs wait for it.
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            constraints:
              t:
                check: test -f ../tok
                timeout: 10m
                satisfy: |
                  echo "start $$" >> ../marks
                  while [ ! -f ../go ] && [ -d ../jobs ]; do sleep 0.05; done
                  echo vault sealed
                  exit 1
            jobs:
              a: { run: echo a, constraints: [t] }
              refresh: { every: 1h, run: echo r, constraints: [t] }
            """
        ])
        let out = Pipe()
        let runner = try workspace.start(["run", "jobs", "--progress", "none", "--events", "-"], stdout: out)
        defer { if runner.isRunning { kill(runner.processIdentifier, SIGKILL) } }
        let events = LineReader(out)
        #expect(await events.waitFor(#""job": "a", "event": "waiting""#))
        #expect(await events.waitFor(#""job": "refresh", "event": "waiting""#))
        try "go".write(toFile: workspace.root + "/go", atomically: true, encoding: .utf8)
        #expect(await waitForExit(runner) == 1)
        #expect(workspace.read("marks").split(separator: "\n").count == 1, "one satisfy for both runs")

        let runs = try await workspace.run("runs", "--json")
        let occurrence = try #require(
            runs.stdout.split(separator: "\n").compactMap { try? statusJSON(String($0)) }
                .first { $0["occurrenceOf"] as? String == "refresh" }?["id"] as? String)
        let a = try await workspace.run("logs", "a")
        let refresh = try await workspace.run("logs", "refresh", "--run", occurrence)
        #expect(a.stdout == "vault sealed\n", "\(a.stdout)\(a.stderr)")
        #expect(refresh.stdout == "vault sealed\n", "the occurrence's attempt shows the output too")
    }
}
