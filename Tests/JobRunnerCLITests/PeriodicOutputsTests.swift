import Foundation
import Testing

/// A periodic job's `needs` pass outputs on (SPEC 5.7, 5.8), through the real binary and shell
/// jobs: a one-shot job's from the run, a periodic job's from its latest occurrence.
@Suite struct PeriodicOutputsTests {
    @Test func aPeriodicJobReadsTheOutputsOfTheJobsItNeeds() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            jobs:
              setup: { run: 'echo path=/srv >> "$JOBRUNNER_OUTPUT"' }
              fetch: { every: 1h, run: 'echo etag=abc >> "$JOBRUNNER_OUTPUT"' }
              report:
                every: 1h
                needs: [setup, fetch]
                run: echo "$JOBRUNNER_OUT_SETUP_PATH $JOBRUNNER_OUT_FETCH_ETAG" > ../report
            """
        ])
        let run = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(workspace.read("report") == "/srv abc\n")
    }
}
