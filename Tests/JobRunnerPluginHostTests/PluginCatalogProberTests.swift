import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerPluginHost

/// A catalog with a prober loads a library into this process only for in-process jobs, and only
/// after the prober described it without a problem.
@Suite struct PluginCatalogProberTests {
    /// The build directory of the example plugins: beside `$JOBRUNNER_BINARY`, else .build/debug.
    static let buildDirectory: String = {
        if let binary = ProcessInfo.processInfo.environment["JOBRUNNER_BINARY"] {
            return (binary as NSString).deletingLastPathComponent
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug").path
    }()

    /// A fresh copy of libhello.so in a directory of its own: a file no test has loaded yet.
    static func freshHello() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "prober-\(UUID().uuidString)"
        )
        .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: buildDirectory + "/libhello.so", toPath: directory + "/libhello.so")
        return directory
    }

    static func isLoaded(_ path: String) -> Bool {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD) else { return false }
        dlclose(handle)
        return true
    }

    /// Answers like `jobrunner plugin-describe` would for hello, counting the questions.
    final class StubProber: @unchecked Sendable {
        // @unchecked: `asked` is guarded by `lock`.
        private let lock = NSLock()
        private var asked: [[PluginParameterCheck]] = []
        var questions: [[PluginParameterCheck]] { lock.withLock { asked } }
        var refusal: PluginLoadError?

        func answer(_ name: String, _ path: String, _ checks: [PluginParameterCheck]) -> Result<
            PluginProbeAnswer, PluginLoadError
        > {
            lock.withLock { asked.append(checks) }
            if let refusal { return .failure(refusal) }
            let hello = PluginDescription(
                name: "hello", version: "1.0.0", swiftVersion: nil, handlers: ["greet", "fail"], path: path)
            return .success(PluginProbeAnswer(plugin: hello, verdicts: checks.map { _ in "checked apart" }))
        }
    }

    static func workload(_ isolation: Isolation) -> Workload {
        let job = JobDefinition(
            id: "greet", handler: .plugin(plugin: "hello", handler: "greet"), parameters: ["a": .int(1)],
            isolation: isolation)
        return Workload(jobs: [job], pipelines: [])
    }

    @Test func aProcessJobsLibraryIsNeverLoadedHere() throws {
        let directory = try Self.freshHello()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stub = StubProber()
        let catalog = PluginCatalog(searchPath: [directory], prober: stub.answer)
        let problems = catalog.problems(in: Self.workload(.process))
        #expect(problems.map(\.message) == ["job 'greet': with: does not suit hello.greet: checked apart"])
        #expect(stub.questions == [[], [PluginParameterCheck(handler: "greet", parameters: #"{"a":1}"#)]])
        #expect(try catalog.describe("hello").get().path == directory + "/libhello.so")
        #expect(!Self.isLoaded(directory + "/libhello.so"))
    }

    /// An in-process job's parameter check is asked apart too (issue 26, item 10: a check that
    /// crashed, looped or exited took validation down with it), and validation loads nothing.
    @Test func anInProcessJobsCheckIsAskedApartToo() throws {
        let directory = try Self.freshHello()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stub = StubProber()
        let catalog = PluginCatalog(searchPath: [directory], prober: stub.answer)
        let problems = catalog.problems(in: Self.workload(.inprocess))
        #expect(problems.map(\.message) == ["job 'greet': with: does not suit hello.greet: checked apart"])
        #expect(stub.questions == [[], [PluginParameterCheck(handler: "greet", parameters: #"{"a":1}"#)]])
        #expect(!Self.isLoaded(directory + "/libhello.so"))
    }

    @Test func alikeJobsOneAfterAnotherAreEachReportedAndAskedOnce() throws {
        let directory = try Self.freshHello()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stub = StubProber()
        let catalog = PluginCatalog(searchPath: [directory], prober: stub.answer)
        func job(_ id: String, _ parameters: [String: JSONValue], _ isolation: Isolation) -> JobDefinition {
            JobDefinition(
                id: id, handler: .plugin(plugin: "hello", handler: "greet"), parameters: parameters,
                location: SourceLocation(file: "jobs.yaml", line: id.utf8.count, column: 1),
                isolation: isolation)
        }
        let jobs = [
            job("a", ["a": .int(1)], .process), job("bb", ["a": .int(1)], .process),
            job("ccc", ["a": .int(2)], .processPerAttempt), job("dddd", ["a": .int(2)], .process),
            job("eeeee", ["a": .int(1)], .process),
            JobDefinition(
                id: "other", handler: .plugin(plugin: "hello", handler: "nope"), isolation: .process),
        ]
        let problems = catalog.problems(in: Workload(jobs: jobs, pipelines: []))
        #expect(
            problems.map(\.message) == [
                "job 'other': plugin 'hello' has no handler 'nope' (it offers hello.greet, hello.fail)",
                "job 'a': with: does not suit hello.greet: checked apart",
                "job 'bb': with: does not suit hello.greet: checked apart",
                "job 'ccc': with: does not suit hello.greet: checked apart",
                "job 'dddd': with: does not suit hello.greet: checked apart",
                "job 'eeeee': with: does not suit hello.greet: checked apart",
            ])
        #expect(problems.dropFirst().map(\.location.line) == [1, 2, 3, 4, 5])
        #expect(
            stub.questions == [
                [],
                [
                    PluginParameterCheck(handler: "greet", parameters: #"{"a":1}"#),
                    PluginParameterCheck(handler: "greet", parameters: #"{"a":2}"#),
                ],
            ])
    }

    @Test func aRefusedLibraryIsNeverLoadedHere() throws {
        let directory = try Self.freshHello()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stub = StubProber()
        stub.refusal = .crashedWhileLoading(
            plugin: "hello", path: directory + "/libhello.so", signal: SIGSEGV)
        let catalog = PluginCatalog(searchPath: [directory], prober: stub.answer)
        let problems = catalog.problems(in: Self.workload(.inprocess))
        #expect(problems.count == 1)
        #expect(
            problems.first?.message.contains("crashed while being loaded in a separate process (SIGSEGV")
                == true)
        #expect(throws: PluginLoadError.self) { try catalog.plugin("hello").get() }
        #expect(!Self.isLoaded(directory + "/libhello.so"))
    }
}
