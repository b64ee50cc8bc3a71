/// A validated set of jobs and pipelines: what one `run` executes.
public struct Workload: Sendable {
    /// Jobs in load order: files in sorted path order, jobs in file order.
    public let jobs: [JobDefinition]
    /// Declared pipelines by name; always holds `default`.
    public let pipelines: [String: PipelineDefinition]
    /// How connectivity is checked (SPEC 5.5).
    public let connectivity: ConnectivitySettings
    /// Declared constraints by name (SPEC 5.6).
    public let constraints: [String: ConstraintDefinition]
    /// `plugins.paths` of the job files, absolute, in load order: searched first for plugins.
    public let pluginPaths: [String]
    /// How much history is kept (`retention:`).
    public let retention: RetentionPolicy
    /// `secrets:`: names of environment variables whose values are masked wherever jobrunner
    /// writes (SPEC 3.1), sorted, each once.
    public let secrets: [String]
    /// The jobs of each matrix by the matrix job's own id, in load order (SPEC 3.1): what that
    /// id stands for in `needs:` and `run --only`.
    public let matrices: [String: [String]]
    /// The `notify:` hooks (SPEC 5.13), in file order.
    public let notify: [NotifyHook]
    /// Each job's position in `jobs`.
    let indexByID: [String: Int]

    /// Builds a workload; the caller has already checked ids, needs and cycles
    /// (see ``JobGraph/findCycle(in:)``).
    /// - Parameter positions: each job's position in `jobs` by id, when the caller has it
    ///   already (a loader checking ids builds it); nil: built here.
    public init(
        jobs: [JobDefinition], pipelines: [PipelineDefinition],
        connectivity: ConnectivitySettings = ConnectivitySettings(), constraints: [ConstraintDefinition] = [],
        pluginPaths: [String] = [], retention: RetentionPolicy = RetentionPolicy(), secrets: [String] = [],
        matrices: [String: [String]] = [:], positions: [String: Int]? = nil, notify: [NotifyHook] = []
    ) {
        self.notify = notify
        self.matrices = matrices
        self.retention = retention
        self.secrets = Array(Set(secrets)).sorted()
        self.jobs = jobs
        self.pluginPaths = pluginPaths
        self.connectivity = connectivity
        self.constraints = Dictionary(
            constraints.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.pipelines = PipelineDefinition.table(pipelines)
        if let positions, positions.count == jobs.count {
            self.indexByID = positions
            return
        }
        var index: [String: Int] = [:]
        index.reserveCapacity(jobs.count)
        // By offset: a copy of each job would retain and release all its values.
        for offset in jobs.indices { index[jobs[offset].id] = offset }
        self.indexByID = index
    }

    /// The job with this id.
    public func job(_ id: String) -> JobDefinition? {
        indexByID[id].map { jobs[$0] }
    }

    /// The position of a job in load order; ties between equal priorities go to the lower one.
    public func order(of id: String) -> Int? { indexByID[id] }

    /// Whether a job waits while offline: its own `requiresInternet` or its pipeline's.
    public func requiresInternet(_ job: JobDefinition) -> Bool {
        job.requiresInternet || pipelines[job.pipeline]?.requiresInternet == true
    }

    /// Whether any job needs to know about connectivity at all. By index, with the pipelines
    /// looked at once: a copy of each of 100,000 definitions cost more than the question.
    public var usesInternet: Bool {
        let online = Set(pipelines.filter(\.value.requiresInternet).keys)
        return jobs.indices.contains { jobs[$0].requiresInternet || online.contains(jobs[$0].pipeline) }
    }

    /// For each job, the jobs that need it.
    public func dependents() -> [String: [String]] {
        var result: [String: [String]] = [:]
        for job in jobs {
            for need in job.needs { result[need, default: []].append(job.id) }
        }
        return result
    }
}

/// Graph algorithms over `needs`.
public enum JobGraph {
    /// Returns one dependency cycle as a path that ends where it starts (`a -> b -> a`),
    /// or nil when the graph has none. Needs that name unknown jobs are ignored.
    public static func findCycle(in needs: [(id: String, needs: [String])]) -> [String]? {
        var edges: [String: [String]] = [:]
        var order: [String] = []
        for entry in needs where edges[entry.id] == nil {
            edges[entry.id] = entry.needs
            order.append(entry.id)
        }
        enum Mark { case visiting, done }
        var marks: [String: Mark] = [:]
        for root in order where marks[root] == nil {
            // Iterative DFS: deep chains of thousands of jobs must not overflow the stack.
            var stack: [(id: String, next: Int)] = [(root, 0)]
            marks[root] = .visiting
            while let top = stack.last {
                let children = edges[top.id] ?? []
                if top.next >= children.count {
                    marks[top.id] = .done
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].next += 1
                let child = children[top.next]
                guard edges[child] != nil else { continue }
                switch marks[child] {
                case .visiting:
                    let start = stack.firstIndex { $0.id == child } ?? 0
                    return stack[start...].map(\.id) + [child]
                case .done:
                    continue
                case nil:
                    marks[child] = .visiting
                    stack.append((child, 0))
                }
            }
        }
        return nil
    }
}
