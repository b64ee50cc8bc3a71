import Foundation

@testable import JobRunnerLMDB

enum LMDBTestSupport {
    /// Writes a schema version into a database, as a newer jobrunner would have.
    static func setSchemaVersion(_ version: Int, in directory: String) throws {
        let environment = try Environment(directory: directory, mapSize: 64 << 20)
        let meta = environment.tables.meta
        try environment.write { txn throws(LMDBError) in
            try txn.putPlain(meta, key: StoreKey.schemaVersion, value: Array(String(version).utf8))
        }
    }
}
