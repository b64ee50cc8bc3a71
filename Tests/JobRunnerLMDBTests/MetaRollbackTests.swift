import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

@testable import JobRunnerLMDB

/// A flipped bit in a meta page's transaction id (issue 26, item 2): LMDB opens the meta page
/// with the higher id, so a changed id could make it open the commit before the last, silently,
/// and a finished job ran again. LMDB writes commit N's meta page into page N mod 2, so the two
/// ids are always consecutive, page 0's even: a pair that is not is refused. What stays
/// consecutive cannot be told from a file LMDB wrote: of the 128 single-bit flips of the two
/// ids, exactly one (the second-lowest bit, of whichever page it leaves in turn) opens, as the
/// commit before the last, which is what a power loss may leave too (SPEC 5.1).
@Suite struct MetaRollbackTests {
    /// A store whose last commit finished run R and whose commit before left it running.
    func storeWithTwoCommits() async throws -> String {
        let directory = try temporaryDirectory()
        let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        defer { store.close() }
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var run = RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1)
        try await store.commitAsNewOwner([.putRun(run), .setCurrentRun("R")])
        run.state = .succeeded
        try await store.commitAsNewOwner([.putRun(run)])
        return directory
    }

    @Test func aTransactionIDOutOfTurnIsRefused() async throws {
        let directory = try await storeWithTwoCommits()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let url = URL(fileURLWithPath: directory + "/data.mdb")
        let intact = try Data(contentsOf: url)
        var opened: [(page: Int, bit: Int, state: RunState?)] = []
        for page in 0..<2 {
            for bit in 0..<64 {
                var bytes = intact
                // MDB_meta's transaction id: 8 little-endian bytes at 144 from the page's start.
                bytes[page * 4096 + 144 + bit / 8] ^= UInt8(1 << (bit % 8))
                try bytes.write(to: url)
                do {
                    let store = try LMDBQueueStore(readingOnly: directory, withoutLockFile: true)
                    opened.append((page, bit, try await store.run(id: "R")?.state))
                    store.close()
                } catch {
                    #expect(error.code == .corrupt, "page \(page), bit \(bit): \(error)")
                    #expect(error.message.contains("is damaged"), "\(error)")
                }
            }
        }
        #expect(opened.count == 1, "\(opened)")
        #expect(opened.first?.bit == 1 && opened.first?.state == .running, "\(opened)")
        // The intact file, for comparison, opens at its last commit.
        try intact.write(to: url)
        let store = try LMDBQueueStore(readingOnly: directory, withoutLockFile: true)
        defer { store.close() }
        #expect(try await store.run(id: "R")?.state == .succeeded)
    }

    @Test func idsAsLMDBLeavesThemAreInTurn() {
        #expect(DataFileCheck.inTurn(0, 0))
        #expect(DataFileCheck.inTurn(0, 1))
        #expect(DataFileCheck.inTurn(2, 1))
        #expect(DataFileCheck.inTurn(2, 3))
        #expect(!DataFileCheck.inTurn(1, 2))
        #expect(!DataFileCheck.inTurn(2, 5))
        #expect(!DataFileCheck.inTurn(4, 1))
        #expect(!DataFileCheck.inTurn(UInt64.max - 1, 1))
    }
}
