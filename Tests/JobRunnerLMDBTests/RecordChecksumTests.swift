import CLMDB
import CZlib
import Foundation
import JobRunnerCore
import JobRunnerTesting
import Testing

@testable import JobRunnerLMDB

/// Every stored record carries a checksum, so a changed byte is found when it is read, and every
/// store that opens a file checks every record first (issue 26, item 2): a damaged record was
/// read by `status` as damage and by `run` not at all, which then wrote a new run into the file.
@Suite struct RecordChecksumTests {
    /// A store with two runs (one finished), their jobs, attempts and outputs, a pipeline, a
    /// schedule, a request and the events of those commits.
    func storeWithRecords() async throws -> String {
        let directory = try temporaryDirectory()
        let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        defer { store.close() }
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for (index, runID) in ["R1", "R2"].enumerated() {
            var run = RunRecord(
                id: runID, state: .running, startedAt: start, jobIDs: ["a", "b"], runnerPID: 1)
            var changes: [StoreChange] = [.putRun(run), .setCurrentRun(runID)]
            for jobID in ["a", "b"] {
                var job = JobRecord(jobID: jobID, pipeline: "p", needs: jobID == "b" ? ["a"] : [])
                job.state = .succeeded
                job.attempts = 1
                changes.append(.putJob(runID: runID, job))
                changes.append(
                    .putAttempt(
                        runID: runID,
                        AttemptRecord(
                            jobID: jobID, number: 1, outcome: .succeeded, startedAt: start, finishedAt: start,
                            exitCode: 0)))
                changes.append(.putOutputs(runID: runID, jobID: jobID, occurrence: "", ["k": "v\(index)"]))
            }
            run.state = .succeeded
            run.finishedAt = start
            changes.append(.putRun(run))
            try await store.commitAsNewOwner(changes)
        }
        try await store.commitAsNewOwner([
            .putPipeline(PipelineRecord(name: "p", suspended: 1)),
            .putSchedule(ScheduleRecord(jobID: "tick", anchor: start, schedule: "every 1m")),
        ])
        try await store.post(
            [OperatorRequest(id: 1, kind: .retry, jobID: "a", requestedAt: start)], runID: "R2")
        return directory
    }

    /// What every reader of a store reads, in words: compared between an intact file and a
    /// damaged one that was not refused.
    func everything(in store: LMDBQueueStore) async throws -> String {
        var text = "\(try await store.currentRunID() ?? "-")\n"
        for run in try await store.runs() {
            text += "\(run)\n\(String(describing: try await store.snapshot(runID: run.id)))\n"
            text += "\(try await store.requests(runID: run.id))\n"
        }
        text += "\(try await store.pipelines())\n\(try await store.schedules())\n"
        text += "\(try await store.events(after: 0, limit: 1000).map(\.sequence))\n"
        return text
    }

    func expectRefused(_ directory: String, _ context: Comment) {
        for readOnly in [false, true] {
            #expect(context) {
                let store =
                    readOnly
                    ? try LMDBQueueStore(readingOnly: directory, withoutLockFile: false)
                    : try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
                store.close()
            } throws: { error in
                guard let error = error as? StoreError else { return false }
                return error.code == .corrupt && error.message.contains("\(directory)/data.mdb is damaged")
                    && error.message.contains("restore it from a backup")
            }
        }
    }

    /// Every byte of a stored job record's value, frame and JSON alike, changed in turn: every
    /// change is refused by a store opened for writing and by one opened for reading, and the
    /// file is left as it was. (Before, a byte changed inside a string was read as a record.)
    @Test func everyByteOfAJobRecordIsChecked() async throws {
        let directory = try await storeWithRecords()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let places = try StoredPlaces(directory: directory)
        let record = try #require(places.values.first { $0.table == "jobs" })
        let intact = try Data(contentsOf: places.file)
        for offset in record.range {
            var bytes = intact
            bytes[offset] ^= 0x20
            try bytes.write(to: places.file)
            expectRefused(directory, "byte \(offset - record.range.lowerBound) of \(record.key)")
            #expect(try Data(contentsOf: places.file) == bytes)
        }
    }

    /// A value as docs/architecture.md says it is stored: `0x02`, zlib's CRC-32 of the key and
    /// the payload (4 bytes, little-endian), the payload.
    @Test func aValueIsFramedAsDocumented() async throws {
        let directory = try await storeWithRecords()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = try Environment(
            directory: directory, mapSize: 64 << 20, access: .readOnly(withoutLockFile: true))
        let tables = environment.tables
        let key = StoreKey.pipeline("p")
        let stored = try #require(
            try environment.read { txn throws(LMDBError) in try txn.getPlain(tables.pipelines, key: key) })
        let payload = RecordJSON.encode(PipelineRecord(name: "p", suspended: 1))
        let crc = UInt32(crc32_z(crc32_z(0, key, key.count), payload, payload.count))
        #expect(stored == [0x02] + (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) } + payload)
    }

    /// Keys in the words of the damage message.
    @Test func keysAreDescribedInWords() {
        func words(_ key: [UInt8]) -> String { key.withUnsafeBytes { StoredValue.describe(key: $0) } }
        #expect(words(StoreKey.job(runID: "R", jobID: "b", occurrence: "")) == "R/b")
        #expect(words(StoreKey.attempt(runID: "R", jobID: "b", occurrence: "", number: 2)) == "R/b/#2")
        #expect(words(StoreKey.event(258)) == "#258")
        #expect(words(StoreKey.run("20261128T062259.059Z-c3d0")) == "20261128T062259.059Z-c3d0")
        #expect(words([0x41, 0xFF, 0x42]) == "A?B")
    }

    /// A byte of a key changed: the record is under a key it was not written under, and the
    /// checksum (of the key and the value) says so.
    @Test func aChangedKeyIsFound() async throws {
        let directory = try await storeWithRecords()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let places = try StoredPlaces(directory: directory)
        let record = try #require(places.values.first { $0.table == "attempts" })
        var bytes = try Data(contentsOf: places.file)
        bytes[record.keyRange.lowerBound] ^= 0x01
        try bytes.write(to: places.file)
        expectRefused(directory, "key of \(record.key)")
    }

    /// Single-byte changes, seeded, in the values of every table: each is refused by every
    /// store, which writes nothing. A change that was not refused would have to read as the
    /// intact file does.
    @Test func seededChangesInEveryTableAreRefusedAndNothingIsWritten() async throws {
        let directory = try await storeWithRecords()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let places = try StoredPlaces(directory: directory)
        #expect(Set(places.values.map(\.table)).isSuperset(of: StoredPlaces.tableNames))
        let intact = try Data(contentsOf: places.file)
        let reference = try await {
            let store = try LMDBQueueStore(readingOnly: directory, withoutLockFile: false)
            defer { store.close() }
            return try await everything(in: store)
        }()
        var random = SeededRandomSource(seed: 26)
        for round in 0..<240 {
            let record = places.values[Int(random.nextUnit() * Double(places.values.count))]
            let offset = record.range.lowerBound + Int(random.nextUnit() * Double(record.range.count))
            var bytes = intact
            bytes[offset] ^= UInt8(1 + Int(random.nextUnit() * 255))
            try bytes.write(to: places.file)
            do {
                let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
                let read = try await everything(in: store)
                store.close()
                Issue.record(
                    "round \(round): a change in \(record.key) (\(record.table)) was read: \(read == reference)"
                )
            } catch {
                #expect((error as? StoreError)?.code == .corrupt, "round \(round): \(error)")
            }
            #expect(try Data(contentsOf: places.file) == bytes, "round \(round): the file was written")
        }
    }

    /// A file of schema 1 (records without checksums, as older versions wrote them) reads as
    /// before; opening it writes nothing, the first commit gives it schema 2, and its old records
    /// still read beside the new ones. A damaged old record is refused (it does not decode).
    @Test func recordsOfSchema1StillRead() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        do {
            let environment = try Environment(directory: directory, mapSize: 64 << 20)
            let tables = environment.tables
            try environment.write { txn throws(LMDBError) in
                try txn.putPlain(tables.meta, key: StoreKey.schemaVersion, value: Array("1".utf8))
                try txn.putPlain(tables.meta, key: StoreKey.currentRun, value: Array("R".utf8))
                let run = RunRecord(id: "R", state: .succeeded, startedAt: start, jobIDs: ["a"], runnerPID: 1)
                try txn.putPlain(tables.runs, key: StoreKey.run("R"), value: RecordJSON.encode(run))
                var job = JobRecord(jobID: "a", pipeline: "default")
                job.state = .succeeded
                try txn.putPlain(
                    tables.jobs, key: StoreKey.job(runID: "R", jobID: "a", occurrence: ""),
                    value: RecordJSON.encode(job))
            }
        }
        let file = URL(fileURLWithPath: directory + "/data.mdb")
        let before = try Data(contentsOf: file)
        do {
            let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
            #expect(try await store.snapshot(runID: "R")?.jobs["a"]?.state == .succeeded)
            store.close()
        }
        #expect(try Data(contentsOf: file) == before, "opening a file of schema 1 wrote to it")
        let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        let run = RunRecord(id: "S", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1)
        try await store.commitAsNewOwner([.putRun(run), .setCurrentRun("S")])
        #expect(try await store.snapshot(runID: "R")?.jobs["a"]?.state == .succeeded)
        #expect(try await store.currentRunID() == "S")
        store.close()
        let reader = try Environment(
            directory: directory, mapSize: 64 << 20, access: .readOnly(withoutLockFile: true))
        let meta = reader.tables.meta
        let version = try reader.read { txn throws(LMDBError) in
            try txn.getPlain(meta, key: StoreKey.schemaVersion)
        }
        #expect(version == Array("2".utf8))
        // The issue's damage, in a record without a checksum.
        var bytes = try Data(contentsOf: file)
        let pattern = Data(#"{"jobID":"a","#.utf8)
        var found = 0
        while let range = bytes.range(of: pattern) {
            bytes[range.lowerBound] = UInt8(ascii: "X")
            found += 1
        }
        try #require(found > 0)
        try bytes.write(to: file)
        expectRefused(directory, "a schema-1 job record")
    }
}

/// Where each record of a store is in its data file: the byte ranges of its key and value.
struct StoredPlaces {
    struct Place {
        let table: String
        let key: String
        let keyRange: Range<Int>
        let range: Range<Int>
    }

    static let tableNames: Set<String> = [
        "meta", "runs", "jobs", "attempts", "outputs", "pipelines", "requests", "schedules", "events",
    ]

    let file: URL
    let values: [Place]

    /// Read through LMDB: the pointers it hands over point into its map of the file.
    init(directory: String) throws {
        file = URL(fileURLWithPath: directory + "/data.mdb")
        let environment = try Environment(
            directory: directory, mapSize: 64 << 20, access: .readOnly(withoutLockFile: true))
        var stat = MDB_stat()
        mdb_env_stat(environment.handle, &stat)
        let pageSize = Int(stat.ms_psize)
        // A pointer into the map is a place in a page, which begins with its own number.
        func offset(_ pointer: UnsafeMutableRawPointer?) -> Int {
            let address = Int(bitPattern: pointer)
            let page = address & ~(pageSize - 1)
            let number = UnsafeRawPointer(bitPattern: page)?.load(as: UInt64.self) ?? 0
            return Int(number) * pageSize + (address - page)
        }
        let tables = environment.tables
        let named: [(String, MDB_dbi)] =
            [
                ("meta", tables.meta), ("runs", tables.runs), ("jobs", tables.jobs),
                ("attempts", tables.attempts),
                ("outputs", tables.outputs), ("pipelines", tables.pipelines), ("requests", tables.requests),
                ("schedules", tables.schedules),
            ] + (tables.events.map { [("events", $0)] } ?? [])
        var places: [Place] = []
        var txn: OpaquePointer?
        guard mdb_txn_begin(environment.handle, nil, UInt32(MDB_RDONLY), &txn) == 0 else {
            throw StoreError(.io, "mdb_txn_begin")
        }
        defer { mdb_txn_abort(txn) }
        for (name, dbi) in named {
            var cursor: OpaquePointer?
            guard mdb_cursor_open(txn, dbi, &cursor) == 0 else { throw StoreError(.io, "mdb_cursor_open") }
            defer { mdb_cursor_close(cursor) }
            var key = MDB_val()
            var value = MDB_val()
            var code = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
            while code == 0 {
                let keyStart = offset(key.mv_data)
                let valueStart = offset(value.mv_data)
                let keyBytes = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
                // The schema version is plain text on purpose (every version reads it).
                if !(name == "meta" && keyBytes.elementsEqual(StoreKey.schemaVersion)) {
                    places.append(
                        Place(
                            table: name, key: StoredValue.describe(key: keyBytes),
                            keyRange: keyStart..<(keyStart + key.mv_size),
                            range: valueStart..<(valueStart + value.mv_size)))
                }
                code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
        }
        values = places
    }
}
