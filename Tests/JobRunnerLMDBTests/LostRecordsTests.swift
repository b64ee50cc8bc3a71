import Foundation
import JobRunnerCore
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
}
