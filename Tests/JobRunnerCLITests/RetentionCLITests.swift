import Foundation
import Testing

/// `retention: { runs: N }` leaves N finished runs once a run ends, the run that just ended
/// among them (as `prune --keep N` does).
@Suite struct RetentionCLITests {
    @Test func aRunThatEndsCountsAmongTheRunsKept() async throws {
        let workspace = try Workspace(files: [
            "r.yaml": "retention: { runs: 3 }\njobs:\n  j:\n    run: 'true'\n"
        ])
        for _ in 0..<7 {
            let run = try await workspace.run("run", "jobs", "--progress", "none")
            #expect(run.status == 0, "\(run.stderr)")
        }
        let runs = try await workspace.run("runs", "--json").stdout.split(separator: "\n")
        #expect(runs.count == 3, "\(runs)")
        let prune = try await workspace.run("prune", "--keep", "3")
        #expect(prune.stdout == "pruned 0 runs; 3 kept\n", "\(prune.stdout)")
    }
}
