import CLMDB
import Foundation
import JobRunnerCore

/// The committed events as the LMDB store keeps them: one row per commit in the `events`
/// table, written in that commit's transaction, so a reader in any process sees an event
/// exactly when it sees its change. A row's key is the sequence number of its last event
/// (``StoreKey/event(_:)``), its value the commit's events (``CommittedEvent/Batch``); numbers
/// run on from the last row, whichever process wrote it (LMDB has one writer at a time).
///
/// Bounded: once ``CommittedEvent/kept`` newer events exist, the oldest rows are deleted, in
/// the same transaction.
struct EventRows {
    /// The table as the last transaction that appended left it: the number of its last event
    /// and the key of its oldest row. Only good for the transaction right after that one (the
    /// writer's next, when no other process wrote meanwhile): then no read is needed.
    private var known: (transaction: Int, last: UInt64, oldest: UInt64?)?

    /// Appends the events of a commit, if it made any; returns the number of its last one.
    @discardableResult
    mutating func append(_ batch: inout CommittedEvent.Batch, in txn: borrowing Transaction, table: MDB_dbi)
        throws(LMDBError) -> UInt64?
    {
        guard batch.count > 0 else { return nil }
        var (last, oldest) = try state(in: txn, table: table)
        last += UInt64(batch.count)
        try txn.put(table, key: StoreKey.event(last), value: batch.finish())
        if oldest == nil { oldest = last }
        while let first = oldest, last - first >= CommittedEvent.kept {
            try txn.delete(table, key: StoreKey.event(first))
            oldest = try txn.edgeKey(table, last: false).flatMap(StoreKey.eventSequence)
        }
        known = (txn.id, last, oldest)
        return last
    }

    /// The last event's number and the oldest row's key: as known after this writer's previous
    /// transaction when this one comes right after it, else read.
    private func state(in txn: borrowing Transaction, table: MDB_dbi) throws(LMDBError) -> (UInt64, UInt64?) {
        if let known, known.transaction == txn.id - 1 { return (known.last, known.oldest) }
        let last = try txn.edgeKey(table, last: true).flatMap(StoreKey.eventSequence) ?? 0
        let oldest = try txn.edgeKey(table, last: false).flatMap(StoreKey.eventSequence)
        return (last, oldest)
    }

    /// A row's events as decoded, with the row's key (the number of its last event).
    struct Decoded: Sendable {
        var last: UInt64
        var events: [CommittedEvent]
    }

    /// The events after `sequence` in a table, at most `limit`, oldest first. `cache` holds the
    /// last row decoded, the one a reader paging through a large row reads again.
    static func read(
        after sequence: UInt64, limit: Int, in txn: borrowing Transaction, table: MDB_dbi,
        cache: Locked<Decoded?>? = nil
    ) throws(LMDBError) -> [CommittedEvent] {
        var events: [CommittedEvent] = []
        guard limit > 0 else { return events }
        // The first row whose last event comes after `sequence` holds the next one.
        try txn.scan(table, from: StoreKey.event(sequence &+ 1)) { key, value throws(LMDBError) in
            guard let last = StoreKey.eventSequence(key) else { return false }
            let batch: [CommittedEvent]
            if let cached = cache?.withLock({ $0 }), cached.last == last {
                batch = cached.events
            } else {
                do {
                    batch = try CommittedEvent.events(inBatch: value, last: last)
                } catch {
                    throw LMDBError(code: MDB_CORRUPTED, operation: "decoding stored events (\(error))")
                }
                // Kept when the page ends inside it: the next page reads it again.
                if batch.count > limit - events.count {
                    cache?.withLock { [batch] in $0 = Decoded(last: last, events: batch) }
                }
            }
            events.append(
                contentsOf: batch.lazy.filter { $0.sequence > sequence }.prefix(limit - events.count))
            return events.count < limit
        }
        return events
    }
}
