import CLMDB
import Foundation
import JobRunnerCore

/// The LMDB-backed ``QueueStore``.
///
/// One writer thread owns every write transaction. Submissions queue up while a commit's
/// fsync is in flight and are then committed together in one transaction (group commit), in
/// submission order, with their events; each completion runs only after its changes are
/// durable.
///
/// Its claim is the runner lock: the process that commits to runs holds the state directory's
/// `flock` (``StateDirectory/lockForRunner(whileWaiting:)``), so no other process's runner
/// commits beside it; within the process, the store refuses a commit under any claim but the
/// latest it granted, by a comparison in memory.
public final class LMDBQueueStore: QueueStore, Sendable {
    /// The schema this build writes; it reads this one and every older one. Schema 2 frames
    /// every value with a checksum (``StoredValue``); a file of schema 1 is read as it is, and
    /// gets version 2 with the first write of this build (its older records stay readable).
    public static let schemaVersion = 2

    let environment: Environment
    let writer: GroupCommitWriter
    /// Whether it reads without LMDB's lock file (`MDB_NOLOCK`): safe only while no runner
    /// writes, which a reader that goes on reading must check again (``StateDirectory``).
    public let readsWithoutLockFile: Bool
    /// The current run's rows as ``readAhead()`` read them, until resuming takes them.
    let rowsReadAhead = Locked<RowsReadAhead?>(nil)
    /// The events row last decoded by ``events(after:limit:)``, by its key: a row is never
    /// changed once written (only deleted), and a reader paging through a large one (a run's
    /// opening of 20,000 jobs is one row of 20,000 events) would otherwise decode it whole for
    /// every page.
    let lastEventRow = Locked<EventRows.Decoded?>(nil)
    /// Checked before each read of a store that reads without LMDB's lock file: it fails while
    /// a runner writes (``StateDirectory/openStoreForReading()``).
    private let readGuard: (@Sendable () throws(StoreError) -> Void)?
    /// How long a reader following the events waits before it looks again, when no commit of
    /// this process woke it: commits of other processes are not heard.
    static let eventPollInterval = Duration.milliseconds(200)

    /// Transactions committed by the writer; for benchmarks and tests of group commit.
    public var transactionCount: Int { writer.transactionCount }

    /// Opens (creating if needed) the database in `directory`.
    /// - Throws: ``StoreError`` `.corrupt`, `.newerSchema`, `.unusable` or `.io`, each with
    ///   a message that says what to do.
    public convenience init(directory: String, mapSize: Int = 8 << 30) throws(StoreError) {
        try self.init(directory: directory, mapSize: mapSize, failsAfterWritingAhead: false)
    }

    /// Opens the existing database in `directory` for reading only: nothing is created or
    /// written (submissions fail), so it can be on read-only media.
    /// - Parameters:
    ///   - withoutLockFile: opens it without LMDB's lock file (`MDB_NOLOCK`), for one that
    ///     cannot be written; only safe while no runner writes to the database.
    ///   - checkBeforeEachRead: called before each read; its error is the read's.
    public convenience init(
        readingOnly directory: String, withoutLockFile: Bool,
        checkBeforeEachRead: (@Sendable () throws(StoreError) -> Void)? = nil
    ) throws(StoreError) {
        try self.init(
            directory: directory, mapSize: 8 << 30, failsAfterWritingAhead: false,
            access: .readOnly(withoutLockFile: withoutLockFile), readGuard: checkBeforeEachRead)
    }

    /// - Parameter failsAfterWritingAhead: for the crash tests, see ``GroupCommitWriter``.
    init(
        directory: String, mapSize: Int, failsAfterWritingAhead: Bool,
        access: Environment.Access = .readWrite, readGuard: (@Sendable () throws(StoreError) -> Void)? = nil
    ) throws(StoreError) {
        self.readGuard = readGuard
        readsWithoutLockFile = access == .readOnly(withoutLockFile: true)
        if access == .readWrite {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700])
            } catch {
                throw StoreError(
                    .unusable,
                    "cannot create the state database directory \(directory) (\(error.localizedDescription)); pass --state DIR with a writable directory",
                    cause: error)
            }
        }
        try DataFileCheck.verify(directory + "/data.mdb")
        try DataFileCheck.verifyLockFile(directory + "/lock.mdb")
        let heldPages = DataFileCheck.holdsPages(directory + "/data.mdb")
        environment = try Self.openEnvironment(
            directory: directory, mapSize: mapSize, access: access, heldPages: heldPages)
        writer = GroupCommitWriter(environment: environment, failsAfterWritingAhead: failsAfterWritingAhead)
        try checkSchema(writable: access == .readWrite)
        // Every command judges the file the same way before anything reads or writes it.
        try checkEveryRecord()
        do {
            try environment.createMissingTables()
        } catch {
            throw error.storeError(path: directory)
        }
        writer.start()
    }

    deinit { writer.close() }

    /// The smallest map tried when the address space is too small for the one asked for.
    static let smallestMapSize = 64 << 20

    /// Opens the environment with a map of `mapSize` bytes, or, when the address space is
    /// limited (`ulimit -v`) so that such a map cannot be made, of half as many, and so on down
    /// to ``smallestMapSize`` (never below the file's own size): the database can grow only as
    /// far as its map, but is usable. Fails with a sentence naming the map and the limit when
    /// even that cannot be mapped.
    private static func openEnvironment(
        directory: String, mapSize: Int, access: Environment.Access, heldPages: Bool
    ) throws(StoreError) -> Environment {
        var size = mapSize
        var info = stat()
        let fileSize = stat(directory + "/data.mdb", &info) == 0 ? Int(info.st_size) : 0
        while true {
            do {
                // A new file gets its schema version in the commit that creates its tables: a
                // runner killed between two such commits left a file with pages and no version,
                // which every later start refused as damaged.
                // A file that holds records is not written to before they are checked: its
                // tables are opened without creating any.
                return try Environment(
                    directory: directory, mapSize: size, access: access, creatingTables: !heldPages
                ) { txn, tables throws(LMDBError) in
                    guard try txn.getPlain(tables.meta, key: StoreKey.schemaVersion) == nil else { return }
                    try txn.putPlain(
                        tables.meta, key: StoreKey.schemaVersion,
                        value: Array(String(Self.schemaVersion).utf8))
                }
            } catch  where error.code == ENOMEM && error.operation == "mdb_env_open" {
                // At most a quarter of the address space at the next try: the map that just
                // fits would leave none for the runner's threads and the jobs' output.
                var smaller = size / 2
                if let limit = addressSpaceBytes() {
                    while smaller > smallestMapSize && smaller > limit / 4 { smaller /= 2 }
                }
                guard smaller >= smallestMapSize, smaller >= fileSize else {
                    throw StoreError(
                        .unusable,
                        "cannot map the state database in \(directory): \(error); jobrunner maps it into memory (\(describe(mapSize)), else down to \(describe(max(smallestMapSize, size)))) and the address space is too small for that\(addressSpaceLimit()); raise the limit (`ulimit -v unlimited`) or run where none is set"
                    )
                }
                size = smaller
            } catch
                where heldPages && error.code == MDB_NOTFOUND && error.operation.hasPrefix("mdb_dbi_open")
            {
                throw lostRecords(directory)
            } catch {
                throw error.storeError(path: directory)
            }
        }
    }

    /// A file that holds pages but whose records (its tables) are gone: lost to damage, not new.
    private static func lostRecords(_ directory: String) -> StoreError {
        StoreError(
            .corrupt,
            "the state database in \(directory) is damaged: its records are gone though the file holds pages; restore it from a backup, or move the state directory aside to start afresh"
        )
    }

    /// The address space this process may have (`ulimit -v`), in bytes; nil when unlimited.
    private static func addressSpaceBytes() -> Int? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max
        else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// ` (it is limited to N by ulimit -v)` when the address space is limited; empty otherwise.
    private static func addressSpaceLimit() -> String {
        addressSpaceBytes().map { " (it is limited to \(describe($0)) by `ulimit -v`)" } ?? ""
    }

    /// A size in the largest binary unit that fits.
    private static func describe(_ bytes: Int) -> String {
        if bytes >= 1 << 30, bytes % (1 << 30) == 0 { return "\(bytes >> 30) GiB" }
        if bytes >= 1 << 20 { return "\(bytes >> 20) MiB" }
        return "\(bytes >> 10) KiB"
    }

    /// Lets the writer finish what was submitted, then stop; later submissions fail.
    public func close() { writer.close() }

    /// Refuses a newer schema. A data file without a version held pages before it was opened
    /// (a new one got its version with its tables): every store writes its version in its first
    /// transaction, so such a file lost its records to damage, and is not taken for an empty
    /// history.
    /// A file of an older schema that is `writable` gets this one's version with its first write.
    private func checkSchema(writable: Bool) throws(StoreError) {
        let tables = environment.tables
        do {
            let stored = try environment.read { txn throws(LMDBError) in
                try txn.getPlain(tables.meta, key: StoreKey.schemaVersion)
            }
            if let stored {
                guard let version = Int(String(decoding: stored, as: UTF8.self)) else {
                    throw StoreError(
                        .corrupt,
                        "the state database in \(environment.path) has an unreadable schema version; move it aside to start afresh"
                    )
                }
                if version > Self.schemaVersion {
                    throw StoreError(
                        .newerSchema,
                        "the state database in \(environment.path) has schema \(version), written by a newer jobrunner (this one reads \(Self.schemaVersion)); use that version, or pass --state DIR"
                    )
                }
                if version < Self.schemaVersion && writable {
                    environment.beforeNextWrite.withLock {
                        $0 = [(StoreKey.schemaVersion, Array(String(Self.schemaVersion).utf8))]
                    }
                }
            } else {
                // A new file has its version by now (`init`): this one held pages before.
                throw Self.lostRecords(environment.path)
            }
        } catch let error as LMDBError {
            throw error.storeError(path: environment.path)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.io, "\(error)", cause: error)
        }
    }

    // MARK: Writing

    public func claim(owner: String) async throws(StoreError) -> StoreClaim {
        writer.grantClaim(owner: owner)
    }

    public func submit(
        _ changes: [StoreChange], under claim: StoreClaim,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        writer.submit(changes, claim: claim, completion: completion)
    }

    public func post(_ requests: [OperatorRequest], runID: String) async throws(StoreError) {
        try await writer.commit(requests.map { .putRequest(runID: runID, $0) }, claim: nil)
    }

    public func prune(runs ids: [String]) async throws(StoreError) {
        try await writer.commit(ids.map(StoreChange.deleteRun), claim: nil)
    }

    // MARK: Reading

    func reading<Result>(_ body: (borrowing Transaction, Tables, JSONDecoder) throws -> Result)
        throws(StoreError) -> Result
    {
        try readGuard?()
        let tables = environment.tables
        let decoder = JSONDecoder()
        do {
            return try environment.read { txn throws(LMDBError) in
                do {
                    return try body(txn, tables, decoder)
                } catch let error as LMDBError {
                    throw error
                } catch {
                    throw LMDBError(code: MDB_CORRUPTED, operation: "decoding a stored record (\(error))")
                }
            }
        } catch {
            throw error.storeError(path: environment.path)
        }
    }

    public func currentRunID() async throws(StoreError) -> String? {
        try reading { txn, tables, _ in
            try txn.get(tables.meta, key: StoreKey.currentRun).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    public func run(id: String) async throws(StoreError) -> RunRecord? {
        try reading { txn, tables, decoder in
            try txn.get(tables.runs, key: StoreKey.run(id)).map { bytes throws(LMDBError) in
                try Self.decodeRun(bytes, decoder)
            }
        }
    }

    public func snapshot(runID: String) async throws(StoreError) -> RunSnapshot? {
        try snapshot(runID: runID, openAttemptsOnly: false)
    }

    /// Reads the attempts of the run that have an outcome no further than their bytes: a
    /// resumed 100,000-job run has up to 100,000 of them, and only the open ones matter.
    public func resumableSnapshot(runID: String) async throws(StoreError) -> RunSnapshot? {
        try snapshot(runID: runID, openAttemptsOnly: true)
    }

    private func snapshot(runID: String, openAttemptsOnly: Bool) throws(StoreError) -> RunSnapshot? {
        let snapshot: RunSnapshot? = try reading { txn, tables, decoder -> RunSnapshot? in
            guard let runBytes = try txn.get(tables.runs, key: StoreKey.run(runID)) else { return nil }
            var snapshot = RunSnapshot(run: try Self.decodeRun(runBytes, decoder))
            snapshot.jobs.reserveCapacity(snapshot.run.jobIDs.count)
            let prefix = StoreKey.runPrefix(runID)
            try txn.scanInPlace(tables.jobs, prefix: prefix) { _, value throws(LMDBError) in
                let job = try Self.decodeJob(value, decoder)
                snapshot.jobs[job.jobID] = job
            }
            (snapshot.attempts, snapshot.outputs) = try Self.readAttemptsAndOutputs(
                txn, tables, decoder, runID: runID, openAttemptsOnly: openAttemptsOnly)
            return snapshot
        }
        // A large run's pages were all read once; a resuming runner need not keep them mapped.
        if (snapshot?.jobs.count ?? 0) >= GroupCommitWriter.rowsThatRelease {
            environment.releaseMappedPages()
        }
        return snapshot
    }

    /// A run's attempts by job id (only those without an outcome, when asked) and outputs.
    static func readAttemptsAndOutputs(
        _ txn: borrowing Transaction, _ tables: Tables, _ decoder: JSONDecoder, runID: String,
        openAttemptsOnly: Bool
    ) throws(LMDBError) -> (attempts: [String: [AttemptRecord]], outputs: [String: [String: String]]) {
        let prefix = StoreKey.runPrefix(runID)
        var attempts: [String: [AttemptRecord]] = [:]
        var outputs: [String: [String: String]] = [:]
        try txn.scanInPlace(tables.attempts, prefix: prefix) { _, value throws(LMDBError) in
            if openAttemptsOnly, RecordJSON.hasOutcome(value) { return }
            var attempt = RecordJSON.decodeAttempt(value)
            if attempt == nil { attempt = try Self.decode(AttemptRecord.self, Array(value), decoder) }
            guard let attempt, !openAttemptsOnly || attempt.outcome == nil else { return }
            attempts[attempt.jobID, default: []].append(attempt)
        }
        try txn.scanInPlace(tables.outputs, prefix: prefix) { key, value throws(LMDBError) in
            let rest = key.dropFirst(prefix.count)
            let jobID = String(decoding: rest.prefix { $0 != StoreKey.separator }, as: UTF8.self)
            outputs[jobID] = try Self.decode([String: String].self, Array(value), decoder)
        }
        return (attempts, outputs)
    }

    public func runs() async throws(StoreError) -> [RunRecord] {
        try reading { txn, tables, decoder in
            var result: [RunRecord] = []
            try txn.scanInPlace(tables.runs, prefix: []) { _, value throws(LMDBError) in
                result.append(try Self.decodeRun(value, decoder))
            }
            return result
        }
    }

    public func pipelines() async throws(StoreError) -> [String: PipelineRecord] {
        try reading { txn, tables, decoder in
            var result: [String: PipelineRecord] = [:]
            try txn.scanInPlace(tables.pipelines, prefix: []) { _, value throws(LMDBError) in
                let record = try Self.decode(PipelineRecord.self, Array(value), decoder)
                result[record.name] = record
            }
            return result
        }
    }

    public func schedules() async throws(StoreError) -> [String: ScheduleRecord] {
        try reading { txn, tables, decoder in
            var result: [String: ScheduleRecord] = [:]
            try txn.scanInPlace(tables.schedules, prefix: []) { _, value throws(LMDBError) in
                let record = try Self.decode(ScheduleRecord.self, Array(value), decoder)
                result[record.jobID] = record
            }
            return result
        }
    }

    public func requests(runID: String) async throws(StoreError) -> [OperatorRequest] {
        try reading { txn, tables, decoder in
            var result: [OperatorRequest] = []
            try txn.scanInPlace(tables.requests, prefix: StoreKey.runPrefix(runID)) {
                _, value throws(LMDBError) in
                result.append(try Self.decode(OperatorRequest.self, Array(value), decoder))
            }
            return result
        }
    }

    public func outputs(of jobs: [JobInRun]) async throws(StoreError) -> [JobInRun: [String: String]] {
        try reading { txn, tables, decoder in
            var found: [JobInRun: [String: String]] = [:]
            for job in jobs {
                let key = StoreKey.job(runID: job.runID, jobID: job.jobID, occurrence: "")
                guard let bytes = try txn.get(tables.outputs, key: key) else { continue }
                found[job] = try Self.decode([String: String].self, bytes, decoder)
            }
            return found
        }
    }

    public func updatePipeline(_ name: String, _ change: @Sendable (inout PipelineRecord) -> Void)
        async throws(StoreError) -> PipelineRecord
    {
        let tables = environment.tables
        do {
            // LMDB serialises write transactions across processes, so this read-modify-write
            // cannot interleave with another runner's or command's. Its event goes with it.
            defer { writer.committedBeside() }
            return try environment.write { txn throws(LMDBError) in
                var record = PipelineRecord(name: name)
                if let bytes = try txn.get(tables.pipelines, key: StoreKey.pipeline(name)) {
                    record = try Self.decode(PipelineRecord.self, bytes, JSONDecoder())
                }
                change(&record)
                try txn.put(tables.pipelines, key: StoreKey.pipeline(name), value: RecordJSON.encode(record))
                if let table = tables.events {
                    var events = CommittedEvent.Batch(committedAt: Date())
                    events.add(.putPipeline(record))
                    var rows = EventRows()
                    try rows.append(&events, in: txn, table: table)
                }
                return record
            }
        } catch {
            throw error.storeError(path: environment.path)
        }
    }

    /// A stored job record: read directly when it is as ``RecordJSON`` writes it, else by
    /// `JSONDecoder` (records of earlier versions).
    static func decodeJob(_ bytes: UnsafeRawBufferPointer, _ decoder: JSONDecoder) throws(LMDBError)
        -> JobRecord
    {
        if let record = RecordJSON.decodeJob(bytes) { return record }
        return try decode(JobRecord.self, Array(bytes), decoder)
    }

    /// A stored run record: read directly when it is as ``RecordJSON`` writes it, else by
    /// `JSONDecoder` (records of earlier versions).
    static func decodeRun(_ bytes: UnsafeRawBufferPointer, _ decoder: JSONDecoder) throws(LMDBError)
        -> RunRecord
    {
        if let record = RecordJSON.decodeRun(bytes) { return record }
        return try decode(RunRecord.self, Array(bytes), decoder)
    }

    static func decodeRun(_ bytes: [UInt8], _ decoder: JSONDecoder) throws(LMDBError) -> RunRecord {
        if let record = bytes.withUnsafeBytes({ RecordJSON.decodeRun($0) }) { return record }
        return try decode(RunRecord.self, bytes, decoder)
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ bytes: [UInt8], _ decoder: JSONDecoder)
        throws(LMDBError) -> Value
    {
        do {
            return try decoder.decode(type, from: Data(bytes))
        } catch {
            throw LMDBError(code: MDB_CORRUPTED, operation: "decoding a stored \(type) (\(error))")
        }
    }
}
