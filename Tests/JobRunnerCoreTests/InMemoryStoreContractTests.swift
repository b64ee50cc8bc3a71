import JobRunnerCore
import JobRunnerTesting
import Testing

/// The store contract (``StoreContract``), run against the in-memory store.
@Suite struct InMemoryStoreContractTests {
    // A case that hangs (a follower never woken) fails instead of holding the suite.
    @Test(.timeLimit(.minutes(1)), arguments: StoreContract.cases)
    func theInMemoryStoreKeepsTheContract(_ check: StoreContract.Case) async throws {
        try await check.run { InMemoryQueueStore() }
    }
}
