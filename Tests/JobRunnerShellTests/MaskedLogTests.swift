import Foundation
import Glibc
import JobRunnerCore
import Testing

@testable import JobRunnerShell

/// Secrets in attempt logs (SPEC 3.1): masked as written, also when a job prints one in
/// pieces; logs readable by their owner only.
@Suite struct MaskedLogTests {
    let secrets = Secrets(SecretMasker(values: ["s3cr3t-token"]))

    @Test func aSecretSplitAcrossAppendsIsMaskedInTheFile() throws {
        let scratch = try Scratch()
        let path = scratch.path + "/masked.log"
        let log = CappedLog(path: path, limit: 1 << 20, masker: secrets.masker)
        for chunk in ["token: s3c", "r3t", "-tok", "en\nend s3cr3t-", "token"] {
            Array(chunk.utf8).withUnsafeBytes { log.append($0) }
        }
        log.finish()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "token: ***\nend ***")
    }

    @Test func aJobThatPrintsASecretInChunksLeavesNoneInItsLog() async throws {
        let scratch = try Scratch()
        let handler = ShellHandler(slots: testSlots, secrets: secrets)
        // Three writes (the pipe may deliver them apart or together), then a whole one.
        let command = "printf 's3c'; printf 'r3t-'; printf 'token\\n'; echo \"$TOKEN\""
        let result = await handler.run(
            scratch.request(.shell(command), environment: ["TOKEN": "s3cr3t-token"]))
        #expect(result.outcome == .succeeded, "\(result)")
        #expect(scratch.log() == "***\n***\n")
    }

    @Test func logsAreOwnerOnly() async throws {
        let scratch = try Scratch()
        let handler = ShellHandler(slots: testSlots)
        _ = await handler.run(scratch.request(.shell("echo hi")))
        var info = stat()
        #expect(stat("\(scratch.path)/logs/job/1.log", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
    }
}
