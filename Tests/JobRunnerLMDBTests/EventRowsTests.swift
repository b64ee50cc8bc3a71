import CLMDB
import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

@testable import JobRunnerLMDB

/// The LMDB store's own side of the committed events (the contract covers the rest): a
/// database written before it had them, and damaged rows.
@Suite struct EventRowsTests {
    let run = RunRecord(
        id: "R", state: .succeeded, startedAt: Date(timeIntervalSince1970: 1_800_000_000), jobIDs: [],
        runnerPID: 1)

    /// Deletes the events table, as a database written before it came has none.
    func dropEvents(in directory: String) throws {
        let environment = try Environment(directory: directory, mapSize: 64 << 20)
        let table = try #require(environment.tables.events)
        try environment.write { txn throws(LMDBError) in
            try LMDBError.check(mdb_drop(txn.handle, table, 1), "mdb_drop")
        }
    }

    @Test func aDatabaseWithoutEventsIsReadAsHavingNoneAndGetsThemOnceWritten() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
            try await store.commitAsNewOwner([.putRun(run)])
            store.close()
        }
        try dropEvents(in: directory)
        do {
            let reader = try LMDBQueueStore(readingOnly: directory, withoutLockFile: false)
            defer { reader.close() }
            #expect(try await reader.runs().map(\.id) == ["R"], "the rest reads as before")
            #expect(try await reader.latestEventSequence() == 0)
            #expect(try await reader.events(after: 0, limit: 10).isEmpty)
        }
        let writer = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        defer { writer.close() }
        try await writer.commitAsNewOwner([.setCurrentRun("R")])
        #expect(try await writer.events(after: 0, limit: 10).map(\.change) == [.currentRun(id: "R")])
        #expect(try await writer.latestEventSequence() == 1)
    }

    @Test func aDamagedEventsRowIsADamagedDatabaseAndKeepsItsCause() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
            try await store.commitAsNewOwner([.putRun(run)])
            store.close()
        }
        do {
            let environment = try Environment(directory: directory, mapSize: 64 << 20)
            let table = try #require(environment.tables.events)
            try environment.write { txn throws(LMDBError) in
                try txn.put(table, key: StoreKey.event(1), value: Array("not events".utf8))
            }
        }
        let reader = try LMDBQueueStore(readingOnly: directory, withoutLockFile: false)
        defer { reader.close() }
        let error = await #expect(throws: StoreError.self) { try await reader.events(after: 0, limit: 10) }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains("move the directory aside") == true, "says what to do")
        #expect((error?.cause as? LMDBError)?.code == MDB_CORRUPTED, "the LMDB error is kept")
    }
}
