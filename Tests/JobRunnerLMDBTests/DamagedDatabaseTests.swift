import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

@testable import JobRunnerLMDB

/// A database file damaged on disk is refused with a sentence, never mapped into a crash
/// (issue 11: SIGBUS on truncation, a double free on a zeroed tail, an empty file taken as new).
@Suite struct DamagedDatabaseTests {
    /// A database with some history in a fresh directory.
    func storeWithHistory() async throws -> String {
        let directory = try temporaryDirectory()
        let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var changes: [StoreChange] = [
            .putRun(RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1)),
            .setCurrentRun("R"),
        ]
        for index in 0..<300 {
            changes.append(
                .putJob(
                    runID: "R", JobRecord(jobID: "job-\(index)", pipeline: String(repeating: "p", count: 200))
                ))
        }
        try await store.commitAsNewOwner(changes)
        store.close()
        return directory
    }

    func damage(_ directory: String, _ change: (inout Data) -> Void) throws {
        let url = URL(fileURLWithPath: directory + "/data.mdb")
        var bytes = try Data(contentsOf: url)
        change(&bytes)
        try bytes.write(to: url)
    }

    func expectRefused(_ directory: String, saying words: String) {
        #expect {
            let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
            store.close()
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .corrupt && error.message.contains(words)
        }
    }

    @Test(arguments: [8192, 32768]) func aTruncatedFileIsRefused(length: Int) async throws {
        let directory = try await storeWithHistory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try damage(directory) { $0 = $0.prefix(length) }
        expectRefused(directory, saying: "truncated")
    }

    @Test func anEmptyFileIsNotTakenForANewDatabase() async throws {
        let directory = try await storeWithHistory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try damage(directory) { $0 = Data() }
        expectRefused(directory, saying: "empty")
    }

    @Test func zeroedMetaPagesAreRefused() async throws {
        let directory = try await storeWithHistory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try damage(directory) { bytes in bytes.replaceSubrange(0..<8192, with: Data(count: 8192)) }
        expectRefused(directory, saying: "meta page")
    }

    @Test func aZeroedTailFailsCleanlyInsteadOfFreeingTwice() async throws {
        let directory = try await storeWithHistory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try damage(directory) { bytes in
            bytes.replaceSubrange(8192..<bytes.count, with: Data(count: bytes.count - 8192))
        }
        // Opening either fails with a store error or reads what is left; it must not abort.
        do {
            let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
            store.close()
        } catch {
            #expect(error.code == .corrupt || error.code == .io, "\(error)")
        }
    }

    @Test func aHealthyFilePassesTheCheck() async throws {
        let directory = try await storeWithHistory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try DataFileCheck.verify(directory + "/data.mdb")
        let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        defer { store.close() }
        #expect(try await store.currentRunID() == "R")
    }
}
