import JobRunnerCore

extension JobFileLoader {
    /// One dependency cycle as a path of job indices that ends where it starts, or nil: what
    /// ``JobGraph/findCycle(in:)`` finds, in the same order, on needs already resolved to
    /// indices (the needs of job i are `needed[starts[i]..<starts[i + 1]]`), so that no id is
    /// hashed again.
    static func findCycle(starts: [Int], needed: [Int]) -> [Int]? {
        let count = starts.count - 1
        // 0: not seen, 1: on the path being walked, 2: done.
        var marks = [UInt8](repeating: 0, count: max(0, count))
        for root in 0..<max(0, count) where marks[root] == 0 {
            // Iterative DFS: deep chains of thousands of jobs must not overflow the stack.
            var stack: [(job: Int, next: Int)] = [(root, starts[root])]
            marks[root] = 1
            while let top = stack.last {
                if top.next >= starts[top.job + 1] {
                    marks[top.job] = 2
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].next += 1
                let child = needed[top.next]
                switch marks[child] {
                case 1:
                    let start = stack.firstIndex { $0.job == child } ?? 0
                    return stack[start...].map(\.job) + [child]
                case 2:
                    continue
                default:
                    marks[child] = 1
                    stack.append((child, starts[child]))
                }
            }
        }
        return nil
    }
}
