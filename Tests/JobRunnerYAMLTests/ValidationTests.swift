import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerYAML

/// The fixtures folder inside the test bundle.
let fixtures: String = {
    let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil)
    return url?.path ?? "Fixtures"
}()

/// The `# error: TEXT` marks of a fixture: line number and expected text.
func expectedErrors(in path: String) throws -> [(line: Int, text: String)] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap {
        index, line in
        guard let range = line.range(of: "# error: ") else { return nil }
        return (index + 1, String(line[range.upperBound...]))
    }
}

@Suite struct BrokenFixtureTests {
    static let files = [
        "unknown-keys", "types", "handlers", "references", "cycle", "version", "duplicate-keys", "syntax",
        "schedules",
    ]

    @Test(arguments: files)
    func reportsEveryMarkedErrorAndNothingElse(name: String) throws {
        let path = "\(fixtures)/broken/\(name).yaml"
        let result = JobFileLoader.load(paths: [path])
        let errors = result.diagnostics.filter { $0.severity == .error }
        #expect(result.workload == nil)
        let expected = try expectedErrors(in: path)
        #expect(!expected.isEmpty)
        for mark in expected {
            let found = errors.contains { $0.location.line == mark.line && $0.message.contains(mark.text) }
            #expect(
                found,
                "\(name).yaml:\(mark.line): expected an error containing \"\(mark.text)\"; got \(errors.map(\.description))"
            )
        }
        for error in errors {
            #expect(
                expected.contains { $0.line == error.location.line },
                "unexpected diagnostic: \(error)")
        }
    }

    @Test func reportsAllProblemsOfAllFilesAtOnceInFileOrder() throws {
        let result = JobFileLoader.load(paths: ["\(fixtures)/broken"])
        #expect(result.files.count == Self.files.count)
        let files = Set(result.diagnostics.map { ($0.location.file as NSString).lastPathComponent })
        #expect(files.count == Self.files.count, "every broken file contributes its diagnostics")
        let locations = result.diagnostics.map { ($0.location.file, $0.location.line, $0.location.column) }
        #expect(locations.elementsEqual(locations.sorted { $0 < $1 }, by: ==))
    }

    @Test func diagnosticsReadFileLineColumnErrorMessage() {
        let result = JobFileLoader.load(texts: [("jobs.yaml", "jobs:\n  a:\n    run: x\n    neds: [b]\n")])
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:4:5: error: unknown key 'neds' in job 'a'; did you mean 'needs'?"
            ])
    }

    @Test func duplicateIdsAcrossFilesAreReportedAtBothPlaces() {
        let result = JobFileLoader.load(texts: [
            ("one.yaml", "jobs:\n  build:\n    run: make\n"),
            ("two.yaml", "jobs:\n  test:\n    run: make test\n  build:\n    run: make\n"),
        ])
        #expect(
            result.diagnostics.map(\.description) == [
                "one.yaml:2:3: error: duplicate job id 'build'; it is also defined at two.yaml:4:3",
                "two.yaml:4:3: error: duplicate job id 'build'; it is also defined at one.yaml:2:3",
            ])
    }

    @Test func needsMayNameJobsOfOtherFiles() {
        let result = JobFileLoader.load(texts: [
            ("one.yaml", "jobs:\n  build:\n    run: make\n"),
            ("two.yaml", "jobs:\n  test:\n    needs: [build]\n    run: make test\n"),
        ])
        #expect(result.diagnostics.isEmpty)
        #expect(result.workload?.job("test")?.needs == ["build"])
    }

    /// Checks from other modules (plugins) see the jobs even when the files have errors, and
    /// their problems join the others in location order, after those at the same place.
    @Test func problemsAddedLaterAreSortedInAndAnErrorTakesTheWorkload() {
        let text = "jobs:\n  a:\n    run: x\n    neds: [b]\n  c:\n    run: y\n"
        let broken = JobFileLoader.load(texts: [("jobs.yaml", text)])
        #expect(broken.workload == nil)
        #expect(broken.jobsAsRead.jobs.map(\.id) == ["a", "c"])
        let added = broken.adding([
            Diagnostic(at: SourceLocation(file: "jobs.yaml", line: 5, column: 3), "later"),
            Diagnostic(at: SourceLocation(file: "jobs.yaml", line: 4, column: 5), "same place"),
            Diagnostic(at: SourceLocation(file: "jobs.yaml", line: 1, column: 1), "first"),
        ])
        #expect(
            added.diagnostics.map(\.message) == [
                "first", "unknown key 'neds' in job 'a'; did you mean 'needs'?", "same place", "later",
            ])

        let valid = JobFileLoader.load(texts: [("jobs.yaml", "jobs:\n  a:\n    run: x\n")])
        #expect(valid.workload != nil)
        let warned = valid.adding([
            Diagnostic(.warning, at: SourceLocation(file: "jobs.yaml", line: 2, column: 3), "just so")
        ])
        #expect(warned.workload?.jobs.map(\.id) == ["a"])
        #expect(
            valid.adding([Diagnostic(at: SourceLocation(file: "jobs.yaml", line: 2, column: 3), "no")])
                .workload == nil)
    }

    @Test func missingPathsAreErrors() {
        let result = JobFileLoader.load(paths: ["/nonexistent/jobs"])
        #expect(
            result.diagnostics.map(\.message) == [
                "no such file or directory; name a job file or a directory of them"
            ])
    }

    @Test func connectivityIsReadOnceAndMayNotBeDeclaredTwice() {
        let one = JobFileLoader.load(texts: [
            (
                "a.yaml",
                "connectivity:\n  probe: ping -c1 x\n  interval: 30s\njobs:\n  f:\n    run: x\n    requiresInternet: true\n"
            )
        ])
        #expect(one.diagnostics.isEmpty)
        #expect(one.workload?.connectivity.probe == "ping -c1 x")
        #expect(one.workload?.connectivity.interval == .seconds(30))
        #expect(one.workload?.job("f")?.requiresInternet == true)
        let two = JobFileLoader.load(texts: [
            ("a.yaml", "connectivity: { interval: 5s }\n"), ("b.yaml", "connectivity: { interval: 6s }\n"),
        ])
        #expect(
            two.diagnostics.map(\.description) == [
                "b.yaml:1:1: error: connectivity is declared twice; the first is at a.yaml:1:1; keep one"
            ])
    }
}

@Suite struct ValidFixtureTests {
    @Test func loadsEveryKeyWithDefaultsMerged() throws {
        let path = "\(fixtures)/valid/pipeline.yaml"
        let result = JobFileLoader.load(paths: [path])
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let workload = try #require(result.workload)
        #expect(workload.jobs.map(\.id) == ["resolve", "build", "notify"])
        #expect(workload.pipelines["build"]?.maxConcurrent == 2)
        #expect(workload.pipelines["build"]?.order == .sequential)

        let resolve = try #require(workload.job("resolve"))
        #expect(resolve.handler == .shell("swift package resolve"))
        #expect(resolve.pipeline == "build")
        #expect(resolve.timeout == .seconds(600))
        #expect(resolve.retry.attempts == 3)
        #expect(resolve.environment == ["SHARED": "yes", "MODE": "default"])

        let build = try #require(workload.job("build"))
        #expect(build.handler == .argv(["swift", "build", "-c", "release"]))
        #expect(build.needs == ["resolve"])
        #expect(build.timeout == .seconds(1200))
        #expect(build.environment == ["SHARED": "yes", "MODE": "release"], "env merges key by key")
        #expect(build.retry.attempts == 3, "retry merges key by key with defaults")
        #expect(build.retry.delay == .seconds(5))
        #expect(build.retry.retryOn == [1, 2])
        #expect(build.retry.maxElapsed == .seconds(3600))
        #expect(build.retry.jitter == 0)
        #expect(build.workingDirectory.hasSuffix("/valid/sub"))

        let notify = try #require(workload.job("notify"))
        #expect(notify.pipeline == "default")
        #expect(notify.priority == -1)
        #expect(notify.enabled == false)
        #expect(notify.retry.attempts == nil)
        #expect(notify.retry.backoff == .fixed)
        #expect(notify.parameters["user"] == .string("alice"))
        #expect(notify.parameters["count"] == .int(3))
        #expect(notify.parameters["tags"] == .array([.string("a"), .string("b")]))
        #expect(notify.parameters["quoted"] == .string("007"), "a quoted scalar stays a string")
    }

    @Test func directoriesLoadYamlFilesRecursivelyInSortedOrder() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "jobrunner-yaml-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/nested", withIntermediateDirectories: true)
        try "jobs:\n  b: { run: b }\n".write(toFile: root + "/b.yml", atomically: true, encoding: .utf8)
        try "jobs:\n  a: { run: a }\n".write(toFile: root + "/a.yaml", atomically: true, encoding: .utf8)
        try "jobs:\n  c: { run: c }\n".write(
            toFile: root + "/nested/c.yaml", atomically: true, encoding: .utf8)
        try "not a job file".write(toFile: root + "/notes.txt", atomically: true, encoding: .utf8)
        let result = JobFileLoader.load(paths: [root])
        #expect(result.workload?.jobs.map(\.id) == ["a", "b", "c"])
        #expect(result.workload?.jobs.map(\.fileIndex) == [0, 1, 2])
    }
}

@Suite struct KillGraceTests {
    @Test func aBadKillGraceIsAnErrorAtItsValue() {
        let result = JobFileLoader.load(texts: [
            (
                "jobs.yaml",
                "jobs:\n  a:\n    run: x\n    killGrace: -5s\n  b:\n    run: x\n    killGrace: {}\n"
            )
        ])
        #expect(result.workload == nil)
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:4:16: error: killGrace: '-5s' is not a duration; write it like 30s, 15m, 1h30m, 500ms or 1d",
                "jobs.yaml:7:16: error: killGrace must be a duration like 30s, 15m, 1h30m or 500ms, not a map",
            ])
    }

    @Test func aMisspeltKillGraceSuggestsTheKey() {
        let result = JobFileLoader.load(texts: [("jobs.yaml", "jobs:\n  a:\n    run: x\n    killGrase: 1s\n")]
        )
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:4:5: error: unknown key 'killGrase' in job 'a'; did you mean 'killGrace'?"
            ])
    }

    @Test func defaultsGiveKillGraceAndAJobMayReplaceIt() throws {
        let result = JobFileLoader.load(texts: [
            (
                "jobs.yaml",
                "defaults:\n  killGrace: 30s\njobs:\n  a:\n    run: x\n  b:\n    run: x\n    killGrace: 0s\n"
            ),
            ("other.yaml", "jobs:\n  c:\n    run: x\n"),
        ])
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let workload = try #require(result.workload)
        #expect(workload.job("a")?.killGrace == .seconds(30))
        #expect(workload.job("b")?.killGrace == .zero, "zero: SIGKILL straight after SIGTERM")
        #expect(workload.job("c")?.killGrace == JobDefinition.defaultKillGrace)
        #expect(JobDefinition.defaultKillGrace == .seconds(5))
    }
}
