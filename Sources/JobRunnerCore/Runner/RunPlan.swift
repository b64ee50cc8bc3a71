/// What the ``Scheduler`` knows of a run's jobs: the graph and the rules that order them, and
/// nothing about how a job runs. Built from loaded job files, or from a stored run alone when an
/// operator command acts on it with no job files at hand.
public struct RunPlan: Sendable {
    /// One job as the scheduler sees it.
    public struct Job: Sendable, Hashable {
        public var id: String
        public var pipeline: String
        public var needs: [String]
        public var priority: Int
        /// The index of its file in load order (`order: sequential`).
        public var fileIndex: Int
        /// Its own `requiresInternet` or its pipeline's.
        public var requiresInternet: Bool
        public var constraints: [String]
        public var retry: RetryPolicy
        public var enabled: Bool
        /// Whether its attempts run code inside the runner's own process (an in-process plugin
        /// handler): only such a job can be blamed for the runner's death (SPEC 5.9).
        public var runsInRunner: Bool
        /// A failure satisfies the jobs that need it and does not fail the run.
        public var allowFailure = false
        /// Whether it runs after its needs succeeded, failed, or whatever they ended as.
        public var when = RunCondition.success

        public init(
            id: String, pipeline: String = PipelineDefinition.defaultName, needs: [String] = [],
            priority: Int = 0, fileIndex: Int = 0, requiresInternet: Bool = false, constraints: [String] = [],
            retry: RetryPolicy = RetryPolicy(), enabled: Bool = true, runsInRunner: Bool = false,
            allowFailure: Bool = false, when: RunCondition = .success
        ) {
            self.allowFailure = allowFailure
            self.when = when
            self.id = id
            self.pipeline = pipeline
            self.needs = needs
            self.priority = priority
            self.fileIndex = fileIndex
            self.requiresInternet = requiresInternet
            self.constraints = constraints
            self.retry = retry
            self.enabled = enabled
            self.runsInRunner = runsInRunner
        }
    }

    /// Jobs in load order.
    public let jobs: [Job]
    /// Pipelines by name; always holds `default`.
    public let pipelines: [String: PipelineDefinition]
    /// Each pipeline's `maxConcurrent`, as a run record keeps them.
    let pipelineLimits: [String: Int]
    /// For each job (by position), where its dependents start in `dependentPositions`; one
    /// more at the end. The jobs that need each job, as positions in load order: a dictionary of
    /// id arrays cost about 100 bytes a job.
    private let dependentStarts: [Int32]
    private let dependentPositions: [Int32]
    /// For each job, where its needs start in `needPositions` (one more at the end): the
    /// position of each of its needs, in its `needs` order, or -1 for one the plan does not have.
    /// Found once, so that neither the graph nor a resumed run's opening looks up ids again.
    private let needStarts: [Int32]
    private let needPositions: [Int32]
    private let indexByID: [String: Int]

    public init(jobs: [Job], pipelines: [PipelineDefinition]) {
        var index: [String: Int] = [:]
        index.reserveCapacity(jobs.count)
        for (offset, job) in jobs.enumerated() { index[job.id] = offset }
        self.init(jobs: jobs, pipelines: pipelines, index: index)
    }

    /// A plan whose pipelines are a table made already (``PipelineDefinition/table(_:)``) with
    /// its limits, as the occurrences of periodic jobs share one.
    init(jobs: [Job], pipelineTable: [String: PipelineDefinition], limits: [String: Int]) {
        var index: [String: Int] = [:]
        index.reserveCapacity(jobs.count)
        for (offset, job) in jobs.enumerated() { index[job.id] = offset }
        self.init(jobs: jobs, pipelineTable: pipelineTable, limits: limits, index: index)
    }

    /// A plan whose `index` already gives each job's position.
    private init(jobs: [Job], pipelines: [PipelineDefinition], index: [String: Int]) {
        let table = PipelineDefinition.table(pipelines)
        self.init(jobs: jobs, pipelineTable: table, limits: table.mapValues(\.maxConcurrent), index: index)
    }

    private init(
        jobs: [Job], pipelineTable: [String: PipelineDefinition], limits: [String: Int], index: [String: Int]
    ) {
        self.jobs = jobs
        self.pipelines = pipelineTable
        self.pipelineLimits = limits
        self.indexByID = index
        var needStarts = [Int32](repeating: 0, count: jobs.count + 1)
        var needPositions: [Int32] = []
        needPositions.reserveCapacity(jobs.reduce(0) { $0 + $1.needs.count })
        // Needs the plan does not have (an occurrence's needs among the one-shot jobs) have no
        // dependents here.
        var starts = [Int32](repeating: 0, count: jobs.count + 1)
        for (offset, job) in jobs.enumerated() {
            for need in job.needs {
                let position = index[need] ?? -1
                needPositions.append(Int32(position))
                if position >= 0 { starts[position + 1] += 1 }
            }
            needStarts[offset + 1] = Int32(needPositions.count)
        }
        for position in jobs.indices { starts[position + 1] += starts[position] }
        var filled = starts
        var positions = [Int32](repeating: 0, count: Int(starts[jobs.count]))
        for offset in jobs.indices {
            for need in needPositions[Int(needStarts[offset])..<Int(needStarts[offset + 1])] where need >= 0 {
                positions[Int(filled[Int(need)])] = Int32(offset)
                filled[Int(need)] += 1
            }
        }
        self.dependentStarts = starts
        self.dependentPositions = positions
        self.needStarts = needStarts
        self.needPositions = needPositions
    }

    /// The plan of loaded job files.
    public init(_ workload: Workload) {
        // By index, with the pipelines that need the internet found once: a copy of each of
        // 100,000 definitions and a look-up of its pipeline cost more than the rest.
        let online = Set(workload.pipelines.filter(\.value.requiresInternet).keys)
        let jobs = workload.jobs.withUnsafeBufferPointer { definitions in
            definitions.indices.map { index in
                Job(
                    definitions[index],
                    requiresInternet: definitions[index].requiresInternet
                        || (!online.isEmpty && online.contains(definitions[index].pipeline)))
            }
        }
        // The workload's index gives the same positions: shared, not built again.
        self.init(jobs: jobs, pipelines: Array(workload.pipelines.values), index: workload.indexByID)
    }

    /// The plan a stored run implies on its own: its graph, pipelines and attempt budgets. Enough
    /// to apply an operator's request; not enough to run anything.
    public init(stored snapshot: RunSnapshot) {
        let run = snapshot.run
        self.init(
            jobs: run.jobIDs.compactMap { id in
                snapshot.jobs[id].map { record in
                    Job(
                        id: id, pipeline: record.pipeline, needs: record.needs,
                        retry: RetryPolicy(attempts: record.maxAttempts), allowFailure: record.allowFailure,
                        when: record.when)
                }
            },
            pipelines: run.pipelineLimits.map { PipelineDefinition(name: $0.key, maxConcurrent: $0.value) })
    }

    /// The job with this id.
    public func job(_ id: String) -> Job? { indexByID[id].map { jobs[$0] } }

    /// Whether `ids` names the same set of jobs as the plan: a run is resumed only by the same
    /// set (SPEC 5.9). The same ids in the same order are the usual answer, found without
    /// building a set of 100,000 ids.
    public func hasJobs(_ ids: [String]) -> Bool {
        if ids.count == jobs.count && ids.indices.allSatisfy({ ids[$0] == jobs[$0].id }) { return true }
        return Set(ids) == Set(jobs.map(\.id))
    }

    /// The jobs that need it, in load order.
    func dependents(of id: String) -> some RandomAccessCollection<String> {
        let range = indexByID[id].map { Int(dependentStarts[$0])..<Int(dependentStarts[$0 + 1]) } ?? 0..<0
        return dependentPositions[range].lazy.map { [jobs] in jobs[Int($0)].id }
    }

    /// Its index in ``jobs``.
    func position(of id: String) -> Int? { indexByID[id] }

    /// The positions of the needs of the job at `position`, in its `needs` order; -1 for a need
    /// the plan does not have.
    func needPositions(of position: Int) -> ArraySlice<Int32> {
        needPositions[Int(needStarts[position])..<Int(needStarts[position + 1])]
    }

    /// Its position in load order: ties between equal priorities go to the lower one.
    public func order(of id: String) -> Int { indexByID[id] ?? Int.max }

    /// Whether any job needs to know about connectivity.
    public var usesInternet: Bool { jobs.contains(where: \.requiresInternet) }

    func maxConcurrent(_ pipeline: String) -> Int {
        pipelines[pipeline]?.maxConcurrent ?? PipelineDefinition.defaultMaxConcurrent
    }

    func isSequential(_ pipeline: String) -> Bool { pipelines[pipeline]?.order == .sequential }
}

extension RunPlan.Job {
    /// A loaded job as the scheduler sees it; `workload` says whether its pipeline needs the
    /// internet.
    public init(_ definition: JobDefinition, in workload: Workload) {
        self.init(definition, requiresInternet: workload.requiresInternet(definition))
    }

    /// A loaded job as the scheduler sees it, whose pipeline's need of the internet is known.
    init(_ definition: JobDefinition, requiresInternet: Bool) {
        self.init(
            id: definition.id, pipeline: definition.pipeline, needs: definition.needs,
            priority: definition.priority,
            fileIndex: definition.fileIndex, requiresInternet: requiresInternet,
            constraints: definition.constraints, retry: definition.retry, enabled: definition.enabled,
            runsInRunner: definition.runsInRunner, allowFailure: definition.allowFailure,
            when: definition.when)
    }
}
