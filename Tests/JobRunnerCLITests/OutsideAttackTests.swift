import Foundation
import Glibc
import Testing

/// Attacks from outside of issue 26, run against the built binary.
@Suite struct OutsideAttackTests {
    /// A state directory with one finished run.
    func finishedRun() async throws -> Workspace {
        let workspace = try Workspace(files: ["a.yaml": "jobs:\n  a:\n    run: echo hi\n"])
        let run = try await workspace.run("run", "jobs", "--progress", "none")
        try #require(run.status == 0, "\(run.stderr)")
        return workspace
    }

    /// One byte of each meta page (the top byte of the last page's number): every state
    /// command says the file is damaged and exits 3, where it trapped on an overflow.
    @Test func aFlippedMetaByteIsExit3WithASentence() async throws {
        let workspace = try await finishedRun()
        let url = URL(fileURLWithPath: workspace.state + "/db/data.mdb")
        var bytes = try Data(contentsOf: url)
        for page in 0..<2 { bytes[page * 4096 + 142] |= 0x80 }
        try bytes.write(to: url)
        for command in [["status"], ["runs"], ["run", "jobs", "--progress", "none"]] {
            let result = try await workspace.run(command, environment: [:])
            #expect(result.status == 3 && !result.signalled, "\(command): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("is damaged"), "\(command): \(result.stderr)")
        }
    }

    /// A FIFO where the database belongs: exit 3 at once, where every state command hung in
    /// its `open`. Each command is given a minute (a guard against a hung suite, not a timing).
    @Test func aFIFOAtTheDataFileIsExit3NotAHang() async throws {
        let workspace = try Workspace(files: ["a.yaml": "jobs:\n  a:\n    run: echo hi\n"])
        try FileManager.default.createDirectory(
            atPath: workspace.state + "/db", withIntermediateDirectories: true)
        #expect(mkfifo(workspace.state + "/db/data.mdb", 0o600) == 0)
        for command in [["status"], ["runs"], ["run", "jobs", "--progress", "none"], ["suspend", "p"]] {
            let err = Pipe()
            let process = try workspace.start(command, stderr: err)
            let status = await ExitWatcher(process).wait(atMost: .seconds(60))
            if status == nil { process.terminate() }
            let text = String(decoding: err.fileHandleForReading.readAllBytes(), as: UTF8.self)
            #expect(status == 3, "\(command) hung or failed: \(text)")
            #expect(text.contains("is a FIFO (named pipe), not a regular file"), "\(command): \(text)")
        }
    }
}
