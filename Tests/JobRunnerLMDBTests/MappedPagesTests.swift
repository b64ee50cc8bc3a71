import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

@testable import JobRunnerLMDB

/// The data file's pages a large read or write mapped stop counting in the runner's memory.
@Suite struct MappedPagesTests {
    /// The resident kilobytes of this process's mapping of `file`, from `/proc/self/smaps`.
    static func residentKilobytes(of file: String) -> Int? {
        guard let text = MappedPages.procText("/proc/self/smaps") else { return nil }
        var inFile = false
        for line in text.split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-") && !line.hasSuffix(":") {
                inFile = line.hasSuffix(" " + file)
            } else if inFile, line.hasPrefix("Rss:") {
                return Int(line.split(separator: " ")[1])
            }
        }
        return nil
    }

    @Test func aLargeRunsPagesAreLetGoOfAfterItIsWrittenAndRead() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LMDBQueueStore(directory: directory + "/db", mapSize: 64 << 20)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let ids = (0..<6000).map { "job-\($0)" }
        var changes: [StoreChange] = [
            .putRun(RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ids, runnerPID: 1)),
            .setCurrentRun("R"),
        ]
        for id in ids {
            changes.append(.putJob(runID: "R", JobRecord(jobID: id, pipeline: "p", needs: [id + "-need"])))
            changes.append(.putAttempt(runID: "R", AttemptRecord(jobID: id, number: 1, startedAt: start)))
        }
        try await store.commitAsNewOwner(changes)
        let file = URL(fileURLWithPath: directory + "/db/data.mdb").resolvingSymlinksInPath().path
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        #expect(size > 1 << 20, "the run fills more than a megabyte")
        let snapshot = try #require(try await store.snapshot(runID: "R"))
        #expect(snapshot.jobs.count == ids.count)
        let resident = try #require(Self.residentKilobytes(of: file), "LMDB maps the data file")
        #expect(resident * 1024 < size / 8, "\(resident) KiB of a \(size / 1024) KiB file still mapped")
        // Read again after the release: the same records.
        #expect(try await store.snapshot(runID: "R") == snapshot)
    }
}
