import Foundation
import Testing

/// Runs `examples/offline-then-online` as its README describes and compares the output with
/// the example's `expected-output.txt`.
@Suite struct ExampleTests {
    static let exampleDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples/offline-then-online").path

    @Test func offlineThenOnlineWithAConstraint() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "jobrunner-example-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.copyItem(atPath: Self.exampleDirectory, toPath: root)
        try? FileManager.default.removeItem(atPath: root + "/world")
        try FileManager.default.createDirectory(atPath: root + "/world", withIntermediateDirectories: true)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: jobrunnerBinary)
        process.arguments = [
            "run", "jobs", "--state", root + "/state", "--progress", "plain", "--events", "-",
        ]
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        var environment = ProcessInfo.processInfo.environment
        environment["JOBRUNNER_ONLINE"] = nil
        process.environment = environment
        let events = Pipe()
        let progress = Pipe()
        process.standardOutput = events
        process.standardError = progress
        try process.run()
        let eventLines = LineReader(events)
        let progressLines = LineReader(progress)

        #expect(
            await eventLines.waitFor(
                "\"job\": \"fetch-users\", \"event\": \"waiting\", \"reason\": \"internet\""))
        let status = try await Self.status(root)
        #expect(status.contains("waiting for internet since"))

        try "".write(toFile: root + "/world/online", atomically: true, encoding: .utf8)
        #expect(await waitForExit(process) == 0)
        _ = await progressLines.waitFor("run ")

        let expected = try String(contentsOfFile: root + "/expected-output.txt", encoding: .utf8)
            .split(separator: "\n").map(String.init)
        let printed = progressLines.all.filter { !$0.hasPrefix("run ") }.map { String($0.dropFirst(9)) }
        #expect(printed == expected)
        #expect(progressLines.all.last?.contains("succeeded") == true)

        let waits = eventLines.all.filter { $0.contains("\"reason\": \"constraint:auth-token\"") }
        #expect(waits.count == 1, "only fetch-users waited for the token: \(waits)")
        let users = try String(contentsOfFile: root + "/world/out/users", encoding: .utf8)
        #expect(users.hasPrefix("users fetched with token tok-"))
    }

    static func status(_ root: String) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: jobrunnerBinary)
        process.arguments = ["status", "--state", root + "/state"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        return await finished(process, stdout: out).stdout
    }
}
