import CLMDB
import Foundation
import JobRunnerCore

/// The one thread that writes: takes everything submitted while the last commit ran and
/// commits it in one transaction (a large run's opening: see `writeAhead`), with its events.
///
/// It also keeps the store's claim: a submission made under a claim other than the latest one
/// granted is refused as the batch is taken, by a comparison in memory (the runner lock, held
/// by this process, keeps every other process's runner away), so the check costs no read.
final class GroupCommitWriter: @unchecked Sendable {
    // @unchecked: `pending`, `closed`, `transactions`, `claim`, `fencing` and `commitWaiters`
    // are guarded by `condition`; `events` is the writer thread's.
    struct Submission {
        let changes: [StoreChange]
        /// The claim it was made under; nil for the writes that need none (requests, pruning).
        let claim: StoreClaim?
        let completion: @Sendable (Result<Void, StoreError>) -> Void
    }

    let environment: Environment
    /// For the crash tests: the transaction after the rows written ahead fails, as if the
    /// runner died before it.
    private let failsAfterWritingAhead: Bool
    private let condition = NSCondition()
    private var pending: [Submission] = []
    private var closed = false
    private var transactions = 0
    /// The latest claim granted, the only one whose submissions are taken.
    private var claim: StoreClaim?
    private var fencing: UInt64 = 0
    /// Readers waiting for this process's next commit (``waitForCommit()``).
    private var commitWaiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    private var events = EventRows()

    /// How often the writer lets go of the data file's mapped pages (``MappedPages``). A
    /// commit maps about a megabyte: each page it reads maps its 64 KiB neighbourhood too
    /// (the kernel's fault-around), and a run's rows lie all over the file. A release costs
    /// tens of microseconds and the page faults after it about as much, against a commit's
    /// millisecond or more.
    static let commitsBetweenReleases = 4
    static let rowsThatRelease = 4096

    init(environment: Environment, failsAfterWritingAhead: Bool = false) {
        self.environment = environment
        self.failsAfterWritingAhead = failsAfterWritingAhead
    }

    var transactionCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return transactions
    }

    func start() {
        // The thread holds the writer (not the store), so the store can go away and close it.
        let thread = Thread { self.run() }
        thread.name = "jobrunner-store-writer"
        thread.start()
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Grants a claim with a fencing number above every earlier one's; from now on only its
    /// submissions (and those that need none) are taken.
    func grantClaim(owner: String) -> StoreClaim {
        condition.lock()
        defer { condition.unlock() }
        fencing += 1
        let granted = StoreClaim(owner: owner, fencing: fencing)
        claim = granted
        return granted
    }

    /// Queues changes; `claim` nil for the writes that need none.
    func submit(
        _ changes: [StoreChange], claim: StoreClaim?,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        condition.lock()
        if closed {
            condition.unlock()
            completion(.failure(StoreError(.io, "the store is closed")))
            return
        }
        pending.append(Submission(changes: changes, claim: claim, completion: completion))
        condition.signal()
        condition.unlock()
    }

    /// Queues changes and waits until they are durable; `claim` nil for the writes that need
    /// none.
    func commit(_ changes: [StoreChange], claim: StoreClaim?) async throws(StoreError) {
        let result: Result<Void, StoreError> = await withCheckedContinuation { continuation in
            submit(changes, claim: claim) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    /// Wakes the readers waiting for this process's next commit: one made beside the writer
    /// (``LMDBQueueStore/updatePipeline(_:_:)``) was.
    func committedBeside() {
        condition.lock()
        let waiters = commitWaiters
        commitWaiters = [:]
        condition.unlock()
        for waiter in waiters.values { waiter.resume() }
    }

    /// Returns after this process's next commit, or when the task is cancelled.
    func waitForCommit() async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                condition.lock()
                let now = closed || Task.isCancelled
                if !now { commitWaiters[id] = continuation }
                condition.unlock()
                if now { continuation.resume() }
            }
        } onCancel: {
            condition.lock()
            let waiter = commitWaiters.removeValue(forKey: id)
            condition.unlock()
            waiter?.resume()
        }
    }

    private func run() {
        while true {
            condition.lock()
            while pending.isEmpty && !closed { condition.wait() }
            if pending.isEmpty && closed {
                condition.unlock()
                return
            }
            let taken = pending
            pending = []
            // Checked as the batch is taken: a claim granted after this is checked next time.
            let current = claim
            condition.unlock()
            let refused = taken.map { $0.claim != nil && $0.claim != current }
            let batch = zip(taken, refused).compactMap { $1 ? nil : $0 }

            var result: Result<Void, StoreError> = .success(())
            if !batch.isEmpty {
                do {
                    try write(batch)
                } catch let error as LMDBError {
                    result = .failure(error.storeError(path: environment.path))
                } catch {
                    result = .failure(StoreError(.io, "cannot encode state: \(error)", cause: error))
                }
            }
            condition.lock()
            if !batch.isEmpty { transactions += 1 }
            let committed = transactions
            let waiters = commitWaiters
            if case .success = result, !batch.isEmpty { commitWaiters = [:] }
            condition.unlock()
            for (submission, refused) in zip(taken, refused) {
                guard refused, let stale = submission.claim else {
                    submission.completion(result)
                    continue
                }
                submission.completion(.failure(stale.refused(current: current)))
            }
            if case .success = result, !batch.isEmpty {
                for waiter in waiters.values { waiter.resume() }
            }
            // Every so many commits, and after one of many rows (a run's opening), the pages
            // they read stop counting in the runner's memory.
            let rows = batch.reduce(0) { $0 + $1.changes.count }
            if committed % Self.commitsBetweenReleases == 0 || rows >= Self.rowsThatRelease {
                environment.releaseMappedPages()
            }
        }
    }
    private func write(_ batch: [Submission]) throws {
        let tables = environment.tables
        // The run whose new jobs were written ahead, if any: only its rows are skipped below
        // (an occurrence opened in the same batch keeps its own).
        let aheadRunID = try largeOpening(in: batch).flatMap { jobs throws(LMDBError) in
            try writeAhead(jobs, batch: batch, tables: tables) ? jobs.runID : nil
        }
        var eventBatch = CommittedEvent.Batch(committedAt: Date())
        for submission in batch {
            for change in submission.changes { eventBatch.add(change) }
        }
        if aheadRunID != nil, failsAfterWritingAhead {
            throw LMDBError(code: EIO, operation: "the commit after the rows written ahead (a test's crash)")
        }
        var rows = BatchRows(
            tables: tables, count: batch.reduce(0) { $0 + $1.changes.count })
        do {
            try environment.write { txn throws(LMDBError) in
                if aheadRunID != nil { try txn.delete(tables.meta, key: StoreKey.openingRun) }
                // Last first: the submissions in reverse, each one's changes in reverse (not
                // flattened into one array, which would copy every change of a run's opening).
                for submission in batch.reversed() {
                    for change in submission.changes.reversed() {
                        guard case .putNewJobs(let jobs) = change else {
                            try rows.write(change, isNewJob: false, in: txn)
                            continue
                        }
                        // Written ahead: no record is made for them.
                        if jobs.runID == aheadRunID { continue }
                        // Each one made as it is written.
                        for position in jobs.indices.reversed() {
                            try rows.write(
                                .putJob(runID: jobs.runID, jobs[position]), isNewJob: true, in: txn)
                        }
                    }
                }
                for runID in rows.pruned {
                    try txn.delete(tables.runs, key: StoreKey.run(runID))
                    try Self.deleteRows(of: runID, in: txn, tables)
                }
                if let table = tables.events { try events.append(&eventBatch, in: txn, table: table) }
            }
        } catch {
            if let failure = rows.failure { throw failure }
            throw error
        }
    }
}
