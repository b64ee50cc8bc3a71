import Foundation
import Testing

/// A matrix job's own id names all of its jobs where a command takes job ids, as `needs:` does
/// (SPEC 3.1).
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

    @Test func retryOfAMatrixRetriesEachOfItsJobsAndLogsListsThem() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.jobs])
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 1)
        let logs = try await workspace.run("logs", "t")
        #expect(logs.status == 1, "\(logs)")
        #expect(
            logs.stderr.contains("'t' is a matrix job; name one of its jobs: t-1, t-2 (jobrunner logs t-1)"),
            "\(logs)")
        let retry = try await workspace.run("retry", "t")
        #expect(retry.status == 0, "\(retry)")
        #expect(retry.stdout.contains("t-1 gets another chance"), "\(retry)")
        #expect(retry.stdout.contains("t-2 gets another chance"), "\(retry)")
        #expect(!retry.stdout.contains("tea"), "\(retry)")
    }
}
