/// Key layout of the tables. Keys are bytes that sort the way they are read:
/// `run \0 job \0 occurrence` for jobs and outputs, plus a big-endian attempt number for
/// attempts, so one run's rows are one range and a periodic job's occurrences sit beside it.
enum StoreKey {
    static let separator: UInt8 = 0

    static func run(_ id: String) -> [UInt8] { Array(id.utf8) }

    static func runPrefix(_ runID: String) -> [UInt8] { Array(runID.utf8) + [separator] }

    // Each key is made in one array of the right size: two are made on every transition.
    static func job(runID: String, jobID: String, occurrence: String) -> [UInt8] {
        var key = jobKey(runID: runID, jobID: jobID, occurrence: occurrence, extra: 0)
        key.append(contentsOf: occurrence.utf8)
        return key
    }

    static func attempt(runID: String, jobID: String, occurrence: String, number: Int) -> [UInt8] {
        var key = jobKey(runID: runID, jobID: jobID, occurrence: occurrence, extra: 9)
        key.append(contentsOf: occurrence.utf8)
        key.append(separator)
        appendBigEndian(UInt64(max(0, number)), to: &key)
        return key
    }

    /// `run \0 job \0`, with room for the occurrence and `extra` bytes more.
    private static func jobKey(runID: String, jobID: String, occurrence: String, extra: Int) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(runID.utf8.count + jobID.utf8.count + occurrence.utf8.count + 2 + extra)
        key.append(contentsOf: runID.utf8)
        key.append(separator)
        key.append(contentsOf: jobID.utf8)
        key.append(separator)
        return key
    }

    private static func appendBigEndian(_ value: UInt64, to key: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) {
            key.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }

    static func pipeline(_ name: String) -> [UInt8] { Array(name.utf8) }

    static func schedule(_ jobID: String) -> [UInt8] { Array(jobID.utf8) }

    static func request(runID: String, id: UInt64) -> [UInt8] {
        var key = runPrefix(runID)
        appendBigEndian(id, to: &key)
        return key
    }

    /// An events row: the sequence number of its last event, big-endian, so rows sort by it.
    static func event(_ sequence: UInt64) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(8)
        appendBigEndian(sequence, to: &key)
        return key
    }

    /// The sequence number an events row's key holds; nil for a key that is none.
    static func eventSequence(_ key: [UInt8]) -> UInt64? {
        guard key.count == 8 else { return nil }
        return key.reduce(0) { $0 << 8 | UInt64($1) }
    }

    static let schemaVersion: [UInt8] = Array("schemaVersion".utf8)
    static let currentRun: [UInt8] = Array("currentRun".utf8)
    /// The run whose job rows are being written ahead of its opening's commit.
    static let openingRun: [UInt8] = Array("openingRun".utf8)
}
