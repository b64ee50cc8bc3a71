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

    @Test func aNewStoreCommitsItsTablesAndSchemaVersionAtOnce() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LMDBQueueStore(directory: directory)
        #expect(lastTransaction(store) == 1)
        store.close()
        // Opened again, it is the same store: nothing is written, nothing refused.
        let again = try LMDBQueueStore(directory: directory)
        #expect(lastTransaction(again) == 1)
        #expect(try await again.runs().isEmpty)
    }

    /// A runner killed during that first commit, after its pages and before its meta page,
    /// leaves a file longer than its two meta pages with nothing committed: it is a new store,
    /// not a damaged one.
    @Test func aFirstCommitThatDiedBeforeItsMetaPageLeavesANewStore() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var env: OpaquePointer?
        #expect(mdb_env_create(&env) == 0)
        #expect(mdb_env_open(env, directory, UInt32(MDB_NOTLS), 0o600) == 0)
        mdb_env_close(env)
        let url = URL(fileURLWithPath: directory + "/data.mdb")
        var bytes = try Data(contentsOf: url)
        #expect(bytes.count == 8192, "two meta pages, as LMDB makes them")
        bytes.append(Data(repeating: 0xAB, count: 3 * 4096))
        try bytes.write(to: url)
        let store = try LMDBQueueStore(directory: directory)
        #expect(try await store.runs().isEmpty)
        #expect(lastTransaction(store) == 1)
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
