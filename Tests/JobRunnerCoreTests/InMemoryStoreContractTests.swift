import JobRunnerCore
import JobRunnerTesting
import Testing

/// The store contract (``StoreContract``), run against the in-memory store.
@Suite struct InMemoryStoreContractTests {
    @Test(arguments: StoreContract.cases)
    func theInMemoryStoreKeepsTheContract(_ check: StoreContract.Case) async throws {
        try await check.run { InMemoryQueueStore() }
    }
}
