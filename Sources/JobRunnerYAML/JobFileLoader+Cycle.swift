import JobRunnerCore

extension JobFileLoader {
    /// Every dependency cycle, one per group of jobs that need each other (a strongly connected
    /// component), as a path of job indices that ends where it starts, ordered by their first
    /// job; the needs of job i are `needed[starts[i]..<starts[i + 1]]`, already resolved to
    /// indices so that no id is hashed again.
    ///
    /// Each cycle starts at the first job of its group and is the shortest way back to it, the
    /// needs followed in their written order: `a -> b -> c -> a`, `a -> a` for a job that needs
    /// itself. Linear in jobs and needs (Tarjan's algorithm, then one breadth-first walk per
    /// group), and iterative, so that deep chains of thousands of jobs do not overflow the stack.
    static func findCycles(starts: [Int], needed: [Int]) -> [[Int]] {
        let count = max(0, starts.count - 1)
        let groups = cyclicGroups(starts: starts, needed: needed, count: count)
        guard !groups.isEmpty else { return [] }
        var group = [Int32](repeating: -1, count: count)
        for (number, members) in groups.enumerated() {
            for member in members { group[member] = Int32(number) }
        }
        // The job each job was first reached from in its group's walk (-1: not reached).
        var from = [Int](repeating: -1, count: count)
        var cycles: [[Int]] = []
        for (number, members) in groups.enumerated() {
            guard let first = members.min() else { continue }
            from[first] = first
            var queue = [first]
            var head = 0
            walk: while head < queue.count {
                let job = queue[head]
                head += 1
                for child in needed[starts[job]..<starts[job + 1]] where group[child] == Int32(number) {
                    if child == first {
                        var path = [first]
                        var step = job
                        while step != first {
                            path.append(step)
                            step = from[step]
                        }
                        cycles.append([first] + path.dropFirst().reversed() + [first])
                        break walk
                    }
                    if from[child] < 0 {
                        from[child] = job
                        queue.append(child)
                    }
                }
            }
        }
        return cycles.sorted { $0[0] < $1[0] }
    }

    /// The strongly connected components that hold a cycle: more than one job, or one job that
    /// needs itself (Tarjan's algorithm, iterative).
    private static func cyclicGroups(starts: [Int], needed: [Int], count: Int) -> [[Int]] {
        // The order in which each job was reached (-1: not yet), and the lowest such order it
        // leads back to among the jobs still on `pending`.
        var order = [Int](repeating: -1, count: count)
        var low = [Int](repeating: 0, count: count)
        var onPending = [Bool](repeating: false, count: count)
        var pending: [Int] = []
        var reached = 0
        var groups: [[Int]] = []
        for root in 0..<count where order[root] < 0 {
            var stack: [(job: Int, next: Int)] = [(root, starts[root])]
            order[root] = reached
            low[root] = reached
            reached += 1
            pending.append(root)
            onPending[root] = true
            while let top = stack.last {
                if top.next < starts[top.job + 1] {
                    stack[stack.count - 1].next += 1
                    let child = needed[top.next]
                    if order[child] < 0 {
                        order[child] = reached
                        low[child] = reached
                        reached += 1
                        pending.append(child)
                        onPending[child] = true
                        stack.append((child, starts[child]))
                    } else if onPending[child] {
                        low[top.job] = min(low[top.job], order[child])
                    }
                    continue
                }
                stack.removeLast()
                if let parent = stack.last { low[parent.job] = min(low[parent.job], low[top.job]) }
                guard low[top.job] == order[top.job] else { continue }
                var members: [Int] = []
                while let member = pending.popLast() {
                    onPending[member] = false
                    members.append(member)
                    if member == top.job { break }
                }
                if members.count > 1 || needed[starts[top.job]..<starts[top.job + 1]].contains(top.job) {
                    groups.append(members)
                }
            }
        }
        return groups
    }
}
