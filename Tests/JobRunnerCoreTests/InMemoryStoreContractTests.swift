import JobRunnerCore
import JobRunnerTesting
import Testing

/// The store contract (``StoreContract``), run against the in-memory store.
@Suite struct InMemoryStoreContractTests {
    // A case that hangs (a follower never woken) fails instead of holding the suite.
    // A guard against a hang (a follower never woken), not a timing check: 3 s alone, far more
    // on a loaded machine.
    @Test(.timeLimit(.minutes(15)), arguments: StoreContract.cases)
    func theInMemoryStoreKeepsTheContract(_ check: StoreContract.Case) async throws {
        try await check.run { InMemoryQueueStore() }
    }
}
