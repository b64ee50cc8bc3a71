import CLMDB
import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerLMDB

/// A new store's first commit holds both its tables and its schema version: a runner killed
/// between two such commits left a file with pages and no version, which every later start
/// refused as damaged (the crash tests met it when a kill came early).
@Suite struct StoreOpeningTests {
    /// The id of the last transaction committed to the store in `directory`.
    func lastTransaction(_ store: LMDBQueueStore) -> Int {
        var info = MDB_envinfo()
        mdb_env_info(store.environment.handle, &info)
        return info.me_last_txnid
    }

    @Test func aNewStoreCommitsItsTablesAndSchemaVersionAtOnce() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LMDBQueueStore(directory: directory)
        #expect(lastTransaction(store) == 1)
        store.close()
        // Opened again, it is the same store: nothing is written, nothing refused.
        let again = try LMDBQueueStore(directory: directory)
        #expect(lastTransaction(again) == 1)
        #expect(try again.runs().isEmpty)
    }

    /// Tables without a version, as a runner killed between those two commits left them, stay
    /// refused: nothing tells them from a file whose records damage took.
    @Test func tablesWithoutAVersionAreStillRefused() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try Environment(directory: directory, mapSize: 64 << 20)
        #expect {
            try LMDBQueueStore(directory: directory)
        } throws: { error in
            (error as? StoreError)?.code == .corrupt
        }
    }
}
