import CLMDB
import Foundation
import JobRunnerCore

/// The check of every stored record, made by every command as it opens the store, before it
/// reads or writes anything else: so all commands judge a file the same way, and none writes
/// into a file another would call damaged.
///
/// A record with a checksum (``StoredValue``, schema 2) is judged by it: if it matches, the
/// bytes are those that were written. A record of schema 1 has none, and is decoded as its
/// readers decode it (the same functions): one that does not decode is damaged. The whole file
/// is read this way; the page walk before LMDB maps it (``DataFileCheck``) read it too.
enum RecordCheck {
    /// Reads every record of every table in one read transaction.
    /// - Throws: a damaged record's error, naming the record.
    static func verify(_ txn: borrowing Transaction, _ tables: Tables, _ decoder: JSONDecoder)
        throws(LMDBError) -> Int
    {
        var records = 0
        let each: [(MDB_dbi, Kind)] =
            [
                (tables.meta, .meta), (tables.runs, .run), (tables.jobs, .job), (tables.attempts, .attempt),
                (tables.outputs, .outputs), (tables.pipelines, .pipeline), (tables.requests, .request),
                (tables.schedules, .schedule),
            ] + (tables.events.map { [($0, Kind.events)] } ?? [])
        for (dbi, kind) in each {
            try txn.scanStored(dbi) { key, stored throws(LMDBError) in
                records += 1
                guard let value = StoredValue.open(stored, key: key) else {
                    throw LMDBError.damaged(
                        "the stored \(kind.words) \(StoredValue.describe(key: key)) does not match its checksum"
                    )
                }
                guard !value.checked else { return }
                do {
                    try judge(value.payload, key: key, kind: kind, decoder)
                } catch {
                    let why = (error as? LMDBError)?.operation ?? "\(error)"
                    throw LMDBError.damaged(
                        "the stored \(kind.words) \(StoredValue.describe(key: key)) cannot be read (\(why))")
                }
            }
        }
        return records
    }

    /// What a table holds, for decoding a record of schema 1 and for messages.
    enum Kind {
        case meta, run, job, attempt, outputs, pipeline, request, schedule, events

        var words: String {
            switch self {
            case .meta: "setting"
            case .run: "run record"
            case .job: "job record"
            case .attempt: "attempt record"
            case .outputs: "outputs"
            case .pipeline: "pipeline record"
            case .request: "operator request"
            case .schedule: "schedule"
            case .events: "events"
            }
        }
    }

    /// Decodes a record without a checksum as its readers do; throws when it cannot be.
    private static func judge(
        _ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, kind: Kind, _ decoder: JSONDecoder
    ) throws {
        switch kind {
        case .meta:
            // The schema version is read (and judged) apart; the others name a run.
            if key.elementsEqual(StoreKey.schemaVersion) { return }
            guard !bytes.isEmpty, bytes.allSatisfy(isRunIDByte) else {
                throw StoreError(.corrupt, "it is not a run id")
            }
        case .run: _ = try LMDBQueueStore.decodeRun(bytes, decoder)
        case .job: _ = try LMDBQueueStore.decodeJob(bytes, decoder)
        case .attempt:
            if RecordJSON.decodeAttempt(bytes) == nil {
                _ = try LMDBQueueStore.decode(AttemptRecord.self, Array(bytes), decoder)
            }
        case .outputs: _ = try LMDBQueueStore.decode([String: String].self, Array(bytes), decoder)
        case .pipeline: _ = try LMDBQueueStore.decode(PipelineRecord.self, Array(bytes), decoder)
        case .request: _ = try LMDBQueueStore.decode(OperatorRequest.self, Array(bytes), decoder)
        case .schedule: _ = try LMDBQueueStore.decode(ScheduleRecord.self, Array(bytes), decoder)
        case .events:
            guard let last = StoreKey.eventSequence(Array(key)) else {
                throw StoreError(.corrupt, "its key is no sequence number")
            }
            _ = try CommittedEvent.events(inBatch: Array(bytes), last: last)
        }
    }

    /// A byte a run id may hold (ids and names are `[A-Za-z0-9_.-]`).
    private static func isRunIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
            true
        default: false
        }
    }
}

extension LMDBQueueStore {
    /// Checks every stored record (``RecordCheck``); the store is refused when one is damaged.
    func checkEveryRecord() throws(StoreError) {
        let records = try reading { txn, tables, decoder in try RecordCheck.verify(txn, tables, decoder) }
        // Every page was read once; a runner need not keep them mapped.
        if records >= GroupCommitWriter.rowsThatRelease { environment.releaseMappedPages() }
    }
}
