import Foundation
import JobRunnerCore
import Logging
import PostgresNIO
import Synchronization

extension PostgresQueueStore {
    /// The one task that writes the store's batches: it takes everything submitted while the
    /// last transaction ran and commits it in one (group commit), in submission order, with the
    /// claim checked by the database in the same transaction.
    final class Writer: Sendable {
        struct Submission: Sendable {
            let changes: [StoreChange]
            /// nil for the writes that need no claim (requests, pruning).
            let claim: StoreClaim?
            let completion: @Sendable (Result<Void, StoreError>) -> Void
        }

        private struct State {
            var pending: [Submission] = []
            var closed = false
            var loop: Task<Void, Never>?
        }

        private let state = Mutex(State())
        private let signals: AsyncStream<Void>
        private let signal: AsyncStream<Void>.Continuation

        init() {
            (signals, signal) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        }

        /// Starts the loop; it holds the store weakly, so that the store can go away.
        func start(store: PostgresQueueStore) {
            let signals = self.signals
            // The writer outlives every caller's task: submissions come from the runner's loop
            // and complete through callbacks. `close()` ends it and waits for it.
            let loop = Task { [weak store, weak self] in
                for await _ in signals {
                    while let self, let taken = self.take() {
                        guard let store else {
                            for submission in taken {
                                submission.completion(.failure(StoreError(.io, "the store is closed")))
                            }
                            continue
                        }
                        await store.commit(taken)
                    }
                    if self?.state.withLock({ $0.closed && $0.pending.isEmpty }) ?? true { return }
                }
            }
            state.withLock { $0.loop = loop }
        }

        private func take() -> [Submission]? {
            state.withLock { state in
                guard !state.pending.isEmpty else { return nil }
                defer { state.pending = [] }
                return state.pending
            }
        }

        func submit(_ submission: Submission) {
            let closed = state.withLock { state in
                if !state.closed { state.pending.append(submission) }
                return state.closed
            }
            if closed {
                submission.completion(.failure(StoreError(.io, "the store is closed")))
            } else {
                signal.yield()
            }
        }

        /// Queues changes that need no claim and waits until they are committed.
        func commit(_ changes: [StoreChange]) async throws(StoreError) {
            let result: Result<Void, StoreError> = await withCheckedContinuation { continuation in
                submit(Submission(changes: changes, claim: nil) { continuation.resume(returning: $0) })
            }
            try result.get()
        }

        /// Commits what was submitted, then ends the loop; later submissions fail.
        func close() async {
            let loop = state.withLock { state in
                state.closed = true
                return state.loop
            }
            signal.yield()
            signal.finish()
            await loop?.value
        }
    }

    /// Commits one batch of submissions in one transaction and calls their completions, in
    /// order: a submission under a claim other than the one in the `claim` row is refused and
    /// writes nothing.
    func commit(_ taken: [Writer.Submission]) async {
        let claimed = taken.contains { $0.claim != nil }
        let outcome: Result<(refused: [Bool], current: StoreClaim?), StoreError>
        do {
            let value = try await transaction("committing a batch") { connection in
                var current: StoreClaim?
                if claimed {
                    let rows = try await connection.query(
                        PostgresQuery(unsafeSQL: SQL.currentClaim), logger: logger)
                    for try await (owner, fencing) in rows.decode((String, Int64).self) {
                        current = StoreClaim(owner: owner, fencing: UInt64(fencing))
                    }
                }
                let refused = taken.map { submission in
                    submission.claim.map { $0.fencing != current?.fencing || $0.owner != current?.owner }
                        ?? false
                }
                var rows = BatchRows(committedAt: Date())
                var any = false
                for (submission, refused) in zip(taken, refused) where !refused {
                    for change in submission.changes { try rows.add(change) }
                    any = any || !submission.changes.isEmpty
                }
                if any {
                    try await rows.write(on: connection, logger: logger)
                    try await appendEvents(rows.events, on: connection)
                }
                return (refused, current)
            }
            outcome = .success(value)
        } catch {
            outcome = .failure(error)
        }
        switch outcome {
        case .success(let (refused, current)):
            followers.wake()
            for (submission, refused) in zip(taken, refused) {
                if refused, let stale = submission.claim {
                    submission.completion(.failure(stale.refused(current: current)))
                } else {
                    submission.completion(.success(()))
                }
            }
        case .failure(let error):
            for submission in taken { submission.completion(.failure(error)) }
        }
    }
}
