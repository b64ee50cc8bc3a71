import HeapModule

/// One pipeline's ready jobs, best first: higher priority, then earlier in load order. In a
/// sequential pipeline, jobs of an earlier file come before all jobs of a later one, so the
/// best job is always from the lowest file that has a ready job.
///
/// A heap beside a membership table, so that a run with tens of thousands of ready jobs costs
/// O(log n) per insert and per start. Removing a job by id only forgets its membership; its
/// heap entry is dropped when it reaches the top (each entry carries the generation of the
/// insert that made it, so a job removed and inserted again is never taken twice).
struct ReadyQueue {
    private struct Entry: Comparable {
        /// The job's file index in a sequential pipeline, else 0.
        let file: Int
        let priority: Int
        let order: Int
        let id: String
        let generation: Int

        /// "Less" is "better": the heap's minimum is the job to start next.
        static func < (lhs: Entry, rhs: Entry) -> Bool {
            if lhs.file != rhs.file { return lhs.file < rhs.file }
            if lhs.priority != rhs.priority { return lhs.priority > rhs.priority }
            if lhs.order != rhs.order { return lhs.order < rhs.order }
            return lhs.generation < rhs.generation
        }
    }

    private var heap = Heap<Entry>()
    /// Each member's generation: the live entry for it in `heap`.
    private var members: [String: Int] = [:]
    private var nextGeneration = 0

    var isEmpty: Bool { members.isEmpty }
    var count: Int { members.count }

    func contains(_ id: String) -> Bool { members[id] != nil }

    /// The ids in the queue, in no particular order.
    var ids: Dictionary<String, Int>.Keys { members.keys }

    /// Adds `id` unless it is already there.
    /// - Parameter file: the job's file index in a sequential pipeline; 0 in any other.
    mutating func insert(_ id: String, priority: Int, order: Int, file: Int = 0) {
        guard members[id] == nil else { return }
        nextGeneration += 1
        members[id] = nextGeneration
        heap.insert(Entry(file: file, priority: priority, order: order, id: id, generation: nextGeneration))
    }

    mutating func remove(_ id: String) {
        guard members.removeValue(forKey: id) != nil else { return }
        if heap.count > 64 && heap.count > 2 * members.count {
            // Mostly stale entries: rebuild rather than carry them.
            heap = Heap(heap.unordered.filter(isLive))
        }
    }

    /// The best job for which `accept` holds, left in the queue. Jobs it passes over are
    /// looked at in order, so the cost grows with how many better jobs `accept` refuses.
    mutating func first(where accept: (String) -> Bool) -> String? {
        var passed: [Entry] = []
        defer { heap.insert(contentsOf: passed) }
        while let entry = heap.popMin() {
            guard isLive(entry) else { continue }
            passed.append(entry)
            if accept(entry.id) { return entry.id }
        }
        return nil
    }

    /// The best job, left in the queue.
    mutating func first() -> String? {
        while let entry = heap.min {
            if isLive(entry) { return entry.id }
            heap.removeMin()
        }
        return nil
    }

    private func isLive(_ entry: Entry) -> Bool { members[entry.id] == entry.generation }
}
