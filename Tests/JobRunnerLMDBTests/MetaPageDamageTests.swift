import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerLMDB

/// Damage to the fields of a meta page, and files that are not files, are refused with a
/// sentence (issue 26, item 3): one flipped byte used to trap on an arithmetic overflow.
@Suite struct MetaPageDamageTests {
    /// A database with one committed run in a fresh directory.
    func storeWithHistory() async throws -> String {
        let directory = try temporaryDirectory()
        let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let claim = try await store.claim(owner: "test")
        try await store.commit(
            [
                .putRun(RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1)),
                .setCurrentRun("R"),
            ], under: claim)
        store.close()
        return directory
    }

    /// The top bit of a meta page's field at `offset` (from the page's start), in both meta pages.
    func setTopBit(at offset: Int, in directory: String) throws {
        let url = URL(fileURLWithPath: directory + "/data.mdb")
        var bytes = try Data(contentsOf: url)
        for page in 0..<2 { bytes[page * 4096 + offset] |= 0x80 }
        try bytes.write(to: url)
    }

    /// The last page's number (bytes 136–143 of a meta page, after its 16-byte header) so big
    /// that the file's length overflows when computed from it.
    @Test func aHugeLastPageIsRefusedNotTrapped() async throws {
        let directory = try await storeWithHistory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try setTopBit(at: 142, in: directory)
        #expect {
            try LMDBQueueStore(directory: directory, mapSize: 64 << 20).close()
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .corrupt && error.message.contains("more than any file holds")
        }
    }

    /// Every field of the meta pages with its top bit set: refused or opened, never a trap.
    @Test(arguments: Array(stride(from: 16 + 7, to: 16 + 160, by: 8)))
    func aTopBitInAnyMetaFieldIsNoCrash(offset: Int) async throws {
        let directory = try await storeWithHistory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try setTopBit(at: offset, in: directory)
        do {
            try LMDBQueueStore(directory: directory, mapSize: 64 << 20).close()
        } catch {
            #expect([.corrupt, .io, .unusable].contains(error.code), "\(error)")
        }
    }

    @Test func aLockFileThatIsAFIFOIsRefusedWithASentence() async throws {
        let directory = try await storeWithHistory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.removeItem(atPath: directory + "/lock.mdb")
        #expect(mkfifo(directory + "/lock.mdb", 0o600) == 0)
        #expect {
            try LMDBQueueStore(directory: directory, mapSize: 64 << 20).close()
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .unusable
                && error.message.contains("is a FIFO (named pipe), not a regular file")
        }
    }
}
