/// Key layout of the tables. Keys are bytes that sort the way they are read:
/// `run \0 job \0 occurrence` for jobs and outputs, plus a big-endian attempt number for
/// attempts, so one run's rows are one range and a periodic job's occurrences sit beside it.
enum StoreKey {
    static let separator: UInt8 = 0

    static func run(_ id: String) -> [UInt8] { Array(id.utf8) }

    static func runPrefix(_ runID: String) -> [UInt8] { Array(runID.utf8) + [separator] }

    static func job(runID: String, jobID: String, occurrence: String) -> [UInt8] {
        runPrefix(runID) + Array(jobID.utf8) + [separator] + Array(occurrence.utf8)
    }

    static func attempt(runID: String, jobID: String, occurrence: String, number: Int) -> [UInt8] {
        let value = UInt64(max(0, number))
        return job(runID: runID, jobID: jobID, occurrence: occurrence) + [separator]
            + (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (UInt64($0) * 8)) }
    }

    static func pipeline(_ name: String) -> [UInt8] { Array(name.utf8) }

    static func schedule(_ jobID: String) -> [UInt8] { Array(jobID.utf8) }

    static func request(runID: String, id: UInt64) -> [UInt8] {
        runPrefix(runID) + (0..<8).reversed().map { UInt8(truncatingIfNeeded: id >> (UInt64($0) * 8)) }
    }

    static let schemaVersion: [UInt8] = Array("schemaVersion".utf8)
    static let currentRun: [UInt8] = Array("currentRun".utf8)
    /// The run whose job rows are being written ahead of its opening's commit.
    static let openingRun: [UInt8] = Array("openingRun".utf8)
}
