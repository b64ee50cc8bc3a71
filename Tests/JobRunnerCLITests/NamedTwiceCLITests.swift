import Foundation
import Testing

/// A job file named twice on the command line (as itself and within its directory) is read
/// once by `validate` and by `run`, not taken for a duplicate of itself.
@Suite(.serialized) struct NamedTwiceCLITests {
    @Test func validateAndRunReadAFileNamedTwiceOnce() async throws {
        let workspace = try Workspace(files: ["a.yaml": "jobs:\n  a1:\n    run: \"true\"\n"])
        let validate = try await workspace.run("validate", "jobs", "jobs/a.yaml", "./jobs/a.yaml")
        #expect(validate.status == 0, "\(validate.stderr)")
        #expect(!validate.stderr.contains("duplicate"))
        let run = try await workspace.run("run", "jobs", "jobs/a.yaml")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!run.stderr.contains("duplicate"))
    }
}
