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

    /// A reader pages through a row larger than its page (a run's opening is one row of as
    /// many events as jobs): every event once, in order, the row decoded once and kept for the
    /// pages after the first (it used to be decoded whole for each page: 40 times for a
    /// 20,000-job opening read 512 at a time), and the rows after it read as they come.
    @Test func pagesThroughALargeRowReadEachEventOnceAndDecodeItOnce() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        defer { store.close() }
        let claim = try await store.claim(owner: "test")
        try await store.commit(
            (0..<1_000).map { StoreChange.putPipeline(PipelineRecord(name: "p", suspended: $0)) },
            under: claim)
        try await store.commit([.setCurrentRun("R")], under: claim)
        var seen: [UInt64] = []
        while true {
            let page = try await store.events(after: seen.last ?? 0, limit: 100)
            if page.isEmpty { break }
            seen += page.map(\.sequence)
            if seen.count < 1_000 {
                #expect(store.lastEventRow.withLock { $0?.last } == 1_000, "the large row is kept")
            }
        }
        #expect(seen == Array(1...1_001))
        let last = try await store.events(after: 999, limit: 10)
        #expect(last.map(\.change) == [.pipeline(name: "p", suspended: 999), .currentRun(id: "R")])
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
