import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

@testable import JobRunnerLMDB

/// Damage that LMDB cannot see — a meta page whose main tree says "empty" — must not be taken
/// for a new database: `status` said `no runs yet` and the next run started a new history.
@Suite struct LostRecordsTests {
    @Test func aFileWhoseRecordsAreGoneIsNotTakenForANewDatabase() async throws {
        let directory = try await DamagedDatabaseTests().storeWithHistory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try DamagedDatabaseTests().damage(directory) { bytes in
            let pageSize = Int(bytes[40]) | Int(bytes[41]) << 8 | Int(bytes[42]) << 16 | Int(bytes[43]) << 24
            // In both meta pages, the main tree (MDB_meta.mm_dbs[1], 48 bytes from offset 88):
            // no pages, no entries, root P_INVALID.
            for page in [0, pageSize] {
                bytes.replaceSubrange(page + 94..<page + 128, with: Data(count: 34))
                bytes.replaceSubrange(page + 128..<page + 136, with: Data(repeating: 0xFF, count: 8))
            }
        }
        DamagedDatabaseTests().expectRefused(directory, saying: "records are gone")
    }

    /// A zeroed tree page made LMDB follow page numbers of garbage (SIGSEGV) or fail an
    /// assertion (SIGABRT); every reachable page is now walked before the file is mapped.
    @Test func aZeroedTreePageIsRefusedBeforeLMDBMapsIt() async throws {
        let directory = try await DamagedDatabaseTests().storeWithHistory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var root = 0
        try DamagedDatabaseTests().damage(directory) { bytes in
            let pageSize = Int(bytes[40]) | Int(bytes[41]) << 8 | Int(bytes[42]) << 16 | Int(bytes[43]) << 24
            func integer(_ offset: Int) -> Int {
                (0..<8).reversed().reduce(0) { $0 << 8 | Int(bytes[offset + $1]) }
            }
            // The newest meta page's main tree root (MDB_meta: txnid at 144, main root at 128).
            let meta = integer(144) >= integer(pageSize + 144) ? 0 : pageSize
            root = integer(meta + 128)
            bytes.replaceSubrange(root * pageSize..<(root + 1) * pageSize, with: Data(count: pageSize))
        }
        DamagedDatabaseTests().expectRefused(directory, saying: "page \(root) says it is page 0")
    }

    /// Values larger than a page live on overflow pages; the walk once read one into the buffer
    /// of the leaf it was walking and refused a healthy file ("points outside itself").
    @Test func aHealthyFileWithLargeValuesPassesTheWalk() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var changes: [StoreChange] = [
            .putRun(RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1))
        ]
        for index in 0..<40 {
            let value = String(repeating: "v", count: index % 3 == 0 ? 9000 : 40)
            changes.append(.putOutputs(runID: "R", jobID: "job-\(index)", occurrence: "", ["k": value]))
        }
        try await store.commitAsNewOwner(changes)
        store.close()
        let again = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        #expect(try await again.snapshot(runID: "R")?.outputs.count == 40)
        again.close()
    }
}
