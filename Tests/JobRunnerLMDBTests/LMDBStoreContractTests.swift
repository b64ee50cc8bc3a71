import Foundation
import JobRunnerCore
import JobRunnerLMDB
import JobRunnerTesting
import Testing

/// A fresh temporary directory, removed by the caller.
func temporaryDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
        "jobrunner-lmdb-\(UUID().uuidString)"
    ).path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// The store contract (``StoreContract``), run against the LMDB store: each case on a database
/// of its own.
@Suite struct LMDBStoreContractTests {
    // A case that hangs (a follower never woken) fails instead of holding the suite.
    // A guard against a hang (a follower never woken), not a timing check: 3 s alone, far more
    // on a loaded machine.
    @Test(.timeLimit(.minutes(15)), arguments: StoreContract.cases)
    func theLMDBStoreKeepsTheContract(_ check: StoreContract.Case) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var opened: LMDBQueueStore?
        defer { opened?.close() }
        try await check.run {
            let store = try LMDBQueueStore(directory: directory + "/db", mapSize: 256 << 20)
            opened = store
            return store
        }
    }
}

/// The two stores, for the LMDB tests that compare what each reads.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
    case memory, lmdb
    var testDescription: String { rawValue }

    func make(_ directory: String) throws -> any QueueStore {
        switch self {
        case .memory: return InMemoryQueueStore()
        case .lmdb: return try LMDBQueueStore(directory: directory + "/db", mapSize: 64 << 20)
        }
    }
}
