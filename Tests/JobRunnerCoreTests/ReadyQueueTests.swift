import Testing

@testable import JobRunnerCore

@Suite struct ReadyQueueTests {
    /// Takes every job in the order the queue gives them.
    func drain(_ queue: inout ReadyQueue) -> [String] {
        var taken: [String] = []
        while let id = queue.first() {
            taken.append(id)
            queue.remove(id)
        }
        return taken
    }

    @Test func higherPriorityFirstThenLoadOrder() {
        var queue = ReadyQueue()
        queue.insert("c", priority: 0, order: 2)
        queue.insert("a", priority: 0, order: 0)
        queue.insert("urgent", priority: 5, order: 9)
        queue.insert("b", priority: 0, order: 1)
        queue.insert("a", priority: 0, order: 0)  // already there: no second copy
        #expect(queue.count == 4)
        #expect(drain(&queue) == ["urgent", "a", "b", "c"])
        #expect(queue.isEmpty)
    }

    @Test func removedJobsAreNeverTakenAndCanComeBack() {
        var queue = ReadyQueue()
        for index in 0..<200 { queue.insert("j\(index)", priority: 0, order: index) }
        for index in 0..<200 where index % 3 != 0 { queue.remove("j\(index)") }
        queue.insert("j1", priority: 0, order: 1)  // removed, then ready again
        queue.remove("j0")
        queue.insert("j0", priority: 0, order: 0)
        let expected = ["j0", "j1"] + stride(from: 3, to: 200, by: 3).map { "j\($0)" }
        #expect(drain(&queue) == expected)
    }

    @Test func sequentialFilesComeBeforePriority() {
        var queue = ReadyQueue()
        queue.insert("later-urgent", priority: 9, order: 5, file: 1)
        queue.insert("first-file", priority: 0, order: 0, file: 0)
        #expect(drain(&queue) == ["first-file", "later-urgent"])
    }

    @Test func firstWhereLeavesTheQueueAsItWas() {
        var queue = ReadyQueue()
        for index in 0..<10 { queue.insert("j\(index)", priority: index % 2, order: index) }
        #expect(queue.first { $0 == "j4" } == "j4")
        #expect(queue.first { $0.hasSuffix("6") || $0.hasSuffix("7") } == "j7")  // odd ones have priority 1
        #expect(queue.first { _ in false } == nil)
        #expect(queue.count == 10)
        #expect(drain(&queue) == ["j1", "j3", "j5", "j7", "j9", "j0", "j2", "j4", "j6", "j8"])
    }
}
