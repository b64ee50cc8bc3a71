import Foundation
import JobRunnerCore
import JobRunnerPostgres
import JobRunnerTesting
import Testing

/// A new database on the tests' throwaway cluster, with this build's schema, and the store
/// opened on it.
func migratedStore() async throws -> PostgresQueueStore {
    let url = try StoreURL(try await ThrowawayPostgres.shared().makeDatabase())
    _ = try await PostgresQueueStore.migrate(url, appliedBy: "tests")
    return try await PostgresQueueStore.open(url)
}

/// The store contract (``StoreContract``), run against the PostgreSQL store: each case on a
/// database of its own, on a cluster the tests start (``ThrowawayPostgres``). Skipped, saying
/// why, only where PostgreSQL's programs are absent.
@Suite(.enabled(if: ThrowawayPostgres.unavailable == nil, ThrowawayPostgres.skipComment))
struct PostgresStoreContractTests {
    // A case that hangs (a follower never woken) fails instead of holding the suite; as generous as
    // the other tests' guard (TestLimits, 900 s): under load the shared cluster's start, which the
    // first case waits for, took over two minutes.
    @Test(.timeLimit(.minutes(15)), arguments: StoreContract.cases)
    func thePostgresStoreKeepsTheContract(_ check: StoreContract.Case) async throws {
        let store = try await migratedStore()
        try await check.run { store }
        await store.close()
    }
}
