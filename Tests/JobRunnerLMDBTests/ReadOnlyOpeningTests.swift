import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

@testable import JobRunnerLMDB

/// A store opened for reading only (`status`, `runs`, `logs`, `wait`) reads the database and
/// changes nothing, with LMDB's lock file or without it; it creates no database either.
@Suite struct ReadOnlyOpeningTests {
    @Test(arguments: [false, true])
    func aReadOnlyStoreReadsAndWritesNothing(withoutLockFile: Bool) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let writer = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        try await writer.commitAsNewOwner([
            .putRun(RunRecord(id: "R", state: .succeeded, startedAt: Date(), jobIDs: [], runnerPID: 1))
        ])
        writer.close()
        let dataFile = URL(fileURLWithPath: directory + "/data.mdb")
        let before = try Data(contentsOf: dataFile)

        let reader = try LMDBQueueStore(readingOnly: directory, withoutLockFile: withoutLockFile)
        #expect(try await reader.runs().map(\.id) == ["R"])
        await #expect(throws: StoreError.self) { try await reader.commitAsNewOwner([.deleteRun("R")]) }
        reader.close()
        #expect(try Data(contentsOf: dataFile) == before)
    }

    @Test func aMissingDatabaseIsNotCreated() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        #expect(throws: StoreError.self) {
            try LMDBQueueStore(readingOnly: parent + "/db", withoutLockFile: true)
        }
        #expect(!FileManager.default.fileExists(atPath: parent + "/db"))
    }
}
