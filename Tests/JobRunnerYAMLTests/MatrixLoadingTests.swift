import JobRunnerCore
import Testing

@testable import JobRunnerYAML

/// `matrix:` (SPEC 3.1): one job per combination, needs on the matrix job meaning all of them.
@Suite struct MatrixLoadingTests {
    func load(_ text: String, environment: [String: String] = [:]) -> JobFileLoader.Result {
        JobFileLoader.load(texts: [("jobs.yaml", text)], environment: environment)
    }

    @Test func expandsOneJobPerCombinationInFileOrder() throws {
        let result = load(
            """
            jobs:
              test:
                run: ./test.sh
                matrix: { os: [debian, alpine], n: [1, 2] }
                with: { suite: unit }
                env: { IMAGE: "${matrix.os}:${matrix.n}" }
              report:
                run: ./report.sh
                needs: [test]
            """)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let workload = try #require(result.workload)
        #expect(
            workload.jobs.map(\.id) == [
                "test-debian-1", "test-debian-2", "test-alpine-1", "test-alpine-2", "report",
            ])
        let job = try #require(workload.job("test-alpine-2"))
        #expect(job.parameters == ["os": .string("alpine"), "n": .int(2), "suite": .string("unit")])
        #expect(job.environment == ["IMAGE": "alpine:2"])
        #expect(job.location == SourceLocation(file: "jobs.yaml", line: 2, column: 3))
        #expect(
            workload.job("report")?.needs == [
                "test-debian-1", "test-debian-2", "test-alpine-1", "test-alpine-2",
            ])
    }

    @Test func valuesAreMadeIdSafe() throws {
        let result = load(
            "jobs:\n  build:\n    run: make\n    matrix:\n      image: ['ubuntu:22.04', node/20]\n      go: [1.20]\n"
        )
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        #expect(result.workload?.jobs.map(\.id) == ["build-ubuntu-22.04-1.20", "build-node-20-1.20"])
        #expect(
            result.workload?.jobs.first?.parameters["go"] == .string("1.20"), "a decimal stays as written")
    }

    @Test func aMatrixJobNeedingAnotherMatrixNeedsAllOfIt() throws {
        let result = load(
            "jobs:\n  a:\n    run: 'true'\n    matrix: { x: [1, 2] }\n  b:\n    run: 'true'\n    needs: a\n    matrix: { y: [p, q] }\n"
        )
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        #expect(result.workload?.job("b-q")?.needs == ["a-1", "a-2"])
    }

    @Test func anErrorInsideAnExpandedJobPointsAtTheFileOnce() {
        let result = load(
            "jobs:\n  test:\n    run: 'true'\n    matrix: { os: [debian, alpine] }\n    timeout: soon\n    needs: [nope]\n    env: { A: '${matrix.arch}' }\n"
        )
        let messages = result.diagnostics.map(\.description)
        #expect(
            messages == [
                "jobs.yaml:5:14: error: timeout: 'soon' is not a duration; write it like 30s, 15m, 1h30m, 500ms or 1d",
                "jobs.yaml:6:13: error: job 'test-debian' needs 'nope', which no loaded file defines",
                "jobs.yaml:6:13: error: job 'test-alpine' needs 'nope', which no loaded file defines",
                "jobs.yaml:7:15: error: env value of 'A': ${matrix.arch}: the job's matrix has no key 'arch'; it has matrix.os",
            ], "\(messages)")
    }

    @Test func badMatricesAreLocated() {
        let result = load(
            """
            jobs:
              a:
                run: 'true'
                matrix: [1, 2]
              b:
                run: 'true'
                matrix: { x: [] }
              c:
                run: 'true'
                matrix: { x: [{ k: v }] }
              d:
                run: 'true'
                matrix: { x: ['a b', a-b] }
              e:
                run: 'true'
                matrix: { x: [1, 2] }
                with: { x: 3 }
              f:
                run: 'true'
                matrix: { a: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17], b: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16] }
            """)
        let messages = result.diagnostics.map(\.description)
        #expect(
            messages == [
                "jobs.yaml:4:13: error: matrix must be a map of keys to values, not a list",
                "jobs.yaml:7:18: error: matrix key 'x' must be a non-empty list of values, like [debian, alpine]",
                "jobs.yaml:10:19: error: each value of matrix key 'x' must be a plain value (a word or a number); this one is a map or a list",
                "jobs.yaml:13:5: error: matrix values (a b) and (a-b) both make the job id 'd-a-b'; make the values differ in letters or digits",
                "jobs.yaml:16:15: error: matrix key 'x' is also a key of with:; the matrix sets it in with:, so keep one of them",
                "jobs.yaml:20:5: error: matrix of job 'f' makes 272 jobs; at most 256 per job, so split it",
            ], "\(messages)")
    }

    @Test func anEmptyMatrixValueIsCalledEmpty() {
        let result = load("jobs:\n  t:\n    run: 'true'\n    matrix: { n: [1, null] }\n")
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:4:22: error: each value of matrix key 'n' must be a plain value (a word or a number); this one is empty (null); write a value there or remove the empty item"
            ])
    }

    @Test func aMatrixIdCannotBeAnotherJobsId() {
        let result = load("jobs:\n  a:\n    run: 'true'\n    matrix: { x: [1] }\n  a-1:\n    run: 'true'\n")
        let messages = result.diagnostics.map(\.description)
        #expect(messages.contains { $0.contains("duplicate job id 'a-1'") }, "\(messages)")
    }
}
