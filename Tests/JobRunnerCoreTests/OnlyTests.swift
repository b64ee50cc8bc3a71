import JobRunnerCore
import Testing

/// `run --only` (``Workload/only(_:)``): the jobs named, what they need, and the settings that
/// apply to them.
@Suite struct OnlyTests {
    private let workload = Workload(
        jobs: [job("t-1"), job("t-2"), job("r", needs: ["t-1"]), job("other")], pipelines: [],
        secrets: ["TOKEN"], matrices: ["t": ["t-1", "t-2"]])

    @Test func aMatrixJobsOwnIdNamesEachOfItsJobs() throws {
        let subset = try workload.only(["t"]).get()
        #expect(subset.jobs.map(\.id) == ["t-1", "t-2"])
        #expect(subset.matrices == ["t": ["t-1", "t-2"]])
    }

    /// The secrets of the job files are masked in a `--only` run as in any other.
    @Test func theSecretsStay() throws {
        #expect(try workload.only(["r"]).get().secrets == ["TOKEN"])
    }

    @Test func anUnknownIdIsSuggestedAgainstJobsAndMatrices() {
        guard case .failure(let unknown) = workload.only(["tt"]) else {
            Issue.record("'tt' is no job")
            return
        }
        #expect(unknown.description == "no job 'tt'; did you mean 't'?")
    }
}
