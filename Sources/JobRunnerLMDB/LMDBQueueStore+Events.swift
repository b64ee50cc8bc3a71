import CLMDB
import Foundation
import JobRunnerCore

extension LMDBQueueStore {
    public func events(after sequence: UInt64, limit: Int) async throws(StoreError) -> [CommittedEvent] {
        try reading { txn, tables, _ in
            guard let table = tables.events else { return [] }
            return try EventRows.read(
                after: sequence, limit: limit, in: txn, table: table, cache: lastEventRow)
        }
    }

    public func latestEventSequence() async throws(StoreError) -> UInt64 {
        try reading { txn, tables, _ in
            guard let table = tables.events else { return 0 }
            return try txn.edgeKey(table, last: true).flatMap(StoreKey.eventSequence) ?? 0
        }
    }

    /// Returns after this process's next commit, or after ``eventPollInterval``: commits of
    /// other processes (a runner, when this is `status` or the API beside it) are not heard, so
    /// a reader looks again that often.
    public func waitForEvents(after sequence: UInt64) async {
        if let latest = try? await latestEventSequence(), latest > sequence { return }
        let writer = self.writer
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await writer.waitForCommit() }
            group.addTask { try? await Task.sleep(for: Self.eventPollInterval) }
            await group.next()
            group.cancelAll()
        }
    }
}
