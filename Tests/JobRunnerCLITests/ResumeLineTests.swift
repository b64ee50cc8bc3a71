import Foundation
import Glibc
import Testing

@Suite struct ResumeLineTests {
    /// SPEC 5.9: "A resumed run says so on its first line", in plain progress and on the
    /// terminal board alike; a new run's first line is its first transition.
    // `slow` sleeps far longer than the test may wait on a loaded machine, so only the SIGTERM
    // ends it (with a 30 s sleep it once ended by itself first, and the run with it).
    @Test func aResumedRunSaysSoOnItsFirstLine() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            jobs:
              first:
                run: echo one
              slow:
                needs: [first]
                run: test -f ../release || exec sleep 600
            """
        ])
        let out = Pipe()
        let runner = try workspace.start(["run", "jobs", "--events", "-"], stdout: out)
        let reader = LineReader(out)
        #expect(await reader.waitFor("\"job\": \"slow\", \"attempt\": 1, \"event\": \"started\""))
        kill(runner.processIdentifier, SIGTERM)
        let stopped = await waitForExit(runner)
        #expect(stopped == 143, "exit status \(stopped); events: \(reader.all.joined(separator: "\n"))")

        try "go".write(toFile: workspace.root + "/release", atomically: true, encoding: .utf8)
        let resumed = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        let lines = resumed.stdout.split(separator: "\n")
        let first = try #require(lines.first)
        #expect(first.contains("resuming    run "), "first line: \(first)")
        #expect(first.hasSuffix(": 1 of 2 jobs final already"), "first line: \(first)")
        #expect(lines.dropFirst().contains { $0.contains("started     slow (attempt 2)") })

        let fresh = try await workspace.run("run", "jobs", "--new", "--progress", "plain")
        #expect(fresh.status == 0)
        #expect(!fresh.stdout.contains("resuming"), "a new run does not say it resumes")
    }
}
