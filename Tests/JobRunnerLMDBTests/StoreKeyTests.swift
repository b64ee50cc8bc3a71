import Testing

@testable import JobRunnerLMDB

/// The keys' bytes are the store's layout: made faster, they must stay byte for byte as
/// stores already on disk have them.
struct StoreKeyTests {
    @Test(arguments: [0, 1, 255, 256, 70_000, Int(Int32.max) + 5])
    func keysKeepTheirLayout(number: Int) {
        let bigEndian = (0..<8).reversed().map {
            UInt8(truncatingIfNeeded: UInt64(number) >> (UInt64($0) * 8))
        }
        let job = Array("run-1".utf8) + [0] + Array("job-é".utf8) + [0] + Array("2026-11-24T05".utf8)
        #expect(StoreKey.job(runID: "run-1", jobID: "job-é", occurrence: "2026-11-24T05") == job)
        #expect(
            StoreKey.attempt(runID: "run-1", jobID: "job-é", occurrence: "2026-11-24T05", number: number)
                == job + [0] + bigEndian)
        #expect(StoreKey.job(runID: "r", jobID: "j", occurrence: "") == [114, 0, 106, 0])
        #expect(StoreKey.request(runID: "r", id: UInt64(number)) == [114, 0] + bigEndian)
        #expect(
            StoreKey.attempt(runID: "r", jobID: "j", occurrence: "", number: -3) == [114, 0, 106, 0, 0]
                + [UInt8](repeating: 0, count: 8))
    }
}
