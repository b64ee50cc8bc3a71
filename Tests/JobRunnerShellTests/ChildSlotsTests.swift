import JobRunnerCore
import JobRunnerShell
import Testing

@Suite struct ChildSlotsTests {
    @Test func noMoreThanCapacityAtOnceAndEveryWaiterRuns() async {
        let slots = ChildSlots(capacity: 3)
        let counts = Counts()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    await slots.withSlot {
                        counts.value.withLock {
                            $0.inside += 1
                            $0.most = max($0.most, $0.inside)
                        }
                        for _ in 0..<5 { await Task.yield() }
                        counts.value.withLock {
                            $0.inside -= 1
                            $0.done += 1
                        }
                    }
                }
            }
        }
        let final = counts.value.withLock { $0 }
        #expect(final.most <= 3)
        #expect(final.done == 50)
        #expect(final.inside == 0)
    }

    @Test func capacityFollowsTheOpenFileLimit() {
        #expect(ChildSlots.capacity(forOpenFileLimit: 20_000) == 2_468)
        #expect(ChildSlots.capacity(forOpenFileLimit: 1_024) == 96)
        #expect(ChildSlots.capacity(forOpenFileLimit: 100) == 8)
        #expect(ChildSlots.capacity(forOpenFileLimit: Int.max) == 65_536)
    }
}

private final class Counts: Sendable {
    let value = Locked((inside: 0, most: 0, done: 0))
}
