import Foundation
import Testing

/// Runs `examples/periodic-refresh` as its README does: a `run` fires the first occurrence of
/// the periodic mirror beside the one-shot job, the mirror is filled, and `runs`, `status` and
/// `logs --run` show the occurrence.
@Suite struct PeriodicExampleTests {
    static let exampleDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples/periodic-refresh").path

    @Test func theFirstOccurrenceMirrorsTheFiles() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "jobrunner-periodic-example-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.copyItem(atPath: Self.exampleDirectory, toPath: root)
        try? FileManager.default.removeItem(atPath: root + "/world")
        try? FileManager.default.removeItem(atPath: root + "/state")
        try FileManager.default.createDirectory(
            atPath: root + "/world/upstream", withIntermediateDirectories: true)
        try "alpha\n".write(toFile: root + "/world/upstream/a.txt", atomically: true, encoding: .utf8)
        try "beta\n".write(toFile: root + "/world/upstream/b.txt", atomically: true, encoding: .utf8)
        #expect(FileManager.default.createFile(atPath: root + "/world/online", contents: Data()))

        func jobrunner(_ arguments: String...) async throws -> (status: Int32, output: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: jobrunnerBinary)
            process.arguments = arguments
            process.currentDirectoryURL = URL(fileURLWithPath: root)
            var environment = ProcessInfo.processInfo.environment
            environment["JOBRUNNER_ONLINE"] = nil
            environment["JOBRUNNER_STATE"] = nil
            process.environment = environment
            let out = Pipe()
            process.standardOutput = out
            process.standardError = out
            try process.run()
            let ended = await finished(process, stdout: out)
            return (ended.status, ended.stdout)
        }

        let run = try await jobrunner("run", "jobs", "--state", "state", "--progress", "plain")
        #expect(run.status == 0, "\(run.output)")
        let expected = try String(contentsOfFile: root + "/expected-output.txt", encoding: .utf8)
            .split(separator: "\n").map(String.init)
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.count == expected.count, "\(run.output)")
        for (line, wanted) in zip(lines, expected) { #expect(line.contains(wanted), "\(line) / \(wanted)") }
        #expect(try String(contentsOfFile: root + "/world/mirror/b.txt", encoding: .utf8) == "beta\n")

        let runs = try await jobrunner("runs", "--state", "state", "--json")
        let occurrence = try #require(
            runs.output.split(separator: "\n").compactMap { try? statusJSON(String($0)) }
                .first { $0["occurrenceOf"] as? String == "mirror" })
        #expect(occurrence["state"] as? String == "succeeded")
        let runID = try #require(occurrence["id"] as? String)
        let logs = try await jobrunner("logs", "mirror", "--run", runID, "--state", "state")
        #expect(logs.output == "mirrored a.txt\nmirrored b.txt\n")
        let status = try await jobrunner("status", "--state", "state")
        #expect(status.output.contains("mirror: last succeeded (run \(runID)); next due"), "\(status.output)")
        let next = try await jobrunner("next", "jobs", "--count", "3")
        #expect(next.status == 0)
        #expect(next.output.contains("mirror: every 1m"), "\(next.output)")
    }
}
