import Foundation
import Testing

/// A matrix job's own id names all of its jobs in `run --only`, as `needs:` does (SPEC 3.1);
/// commands on a stored run list its jobs instead.
@Suite struct MatrixIDTests {
    static let jobs = """
        jobs:
          t:
            matrix: { n: [1, 2] }
            run: test -f ../fixed
          r:
            run: echo r
          tea:
            run: echo tea
        """

    @Test func onlyNamesEveryJobOfAMatrix() async throws {
        let workspace = try Workspace(files: [
            "a.yaml": Self.jobs.replacingOccurrences(of: "test -f ../fixed", with: "true")
        ])
        let run = try await workspace.run("run", "jobs", "--progress", "none", "--only", "t")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("2 succeeded"), "\(run)")
        #expect(Set(try await workspace.statusJobs().keys) == ["t-1", "t-2"])
    }

    /// The run does not say which ids are a matrix's: a name that is no job is never acted on
    /// as a prefix (plain jobs `deploy-prod` and `deploy-staging` are no matrix `deploy`); the
    /// ids that begin with it are listed for the user to name.
    @Test func aNameThatIsNoJobListsTheJobsThatBeginWithItAndActsOnNone() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.jobs])
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 1)
        let logs = try await workspace.run("logs", "t")
        #expect(logs.status == 1, "\(logs)")
        #expect(logs.stderr.contains("the jobs whose ids begin with 't-' are t-1, t-2"), "\(logs)")
        #expect(logs.stderr.contains("(jobrunner logs t-1)"), "\(logs)")
        let retry = try await workspace.run("retry", "t")
        #expect(retry.status == 1, "\(retry)")
        #expect(retry.stderr.contains("(jobrunner retry t-1 t-2)"), "\(retry)")
        #expect(!retry.stderr.contains("tea"), "\(retry)")
        #expect(
            try await workspace.statusJobs()["t-1"]?["state"] as? String == "failed", "nothing was retried")
        let named = try await workspace.run("retry", "t-1", "t-2")
        #expect(named.status == 0, "\(named)")
    }
}
