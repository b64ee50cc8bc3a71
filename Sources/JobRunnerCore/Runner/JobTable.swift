/// The records of a run's jobs, in the plan's load order and found by id through the plan's
/// own index. A dictionary keyed by id cost more than twice as much: holding 100,000 records it
/// reserved 262,144 slots of about 240 bytes each.
struct JobTable {
    private let plan: RunPlan
    private var records: [JobRecord?]

    /// The records of `plan`'s jobs from a table by id; a job without one has none here either,
    /// and records of jobs the plan does not have are left out.
    init(plan: RunPlan, records byID: [String: JobRecord]) {
        self.plan = plan
        self.records = plan.jobs.map { byID[$0.id] }
    }

    /// A new run's records, made from the plan.
    init(plan: RunPlan, new: NewJobRecords) {
        self.plan = plan
        var records: [JobRecord?] = []
        records.reserveCapacity(new.count)
        for record in new { records.append(record) }
        self.records = records
    }

    /// A job's record; setting one for a job the plan does not have does nothing.
    subscript(id: String) -> JobRecord? {
        get { plan.position(of: id).flatMap { records[$0] } }
        set {
            guard let position = plan.position(of: id) else { return }
            records[position] = newValue
        }
    }

    /// Every record, in load order.
    var values: some Collection<JobRecord> { records.lazy.compactMap { $0 } }
}

/// How many needs each job of a run still waits for, in plan order (a dictionary by id cost
/// 6 MB at 100,000 jobs). A final job's count means nothing until it is set again.
struct NeedCounts {
    private let plan: RunPlan
    private var counts: [Int32]

    init(plan: RunPlan) {
        self.plan = plan
        self.counts = Array(repeating: 0, count: plan.jobs.count)
    }

    /// A job's count; 0 for a job the plan does not have, where setting one does nothing.
    subscript(id: String) -> Int {
        get { plan.position(of: id).map { Int(counts[$0]) } ?? 0 }
        set {
            guard let position = plan.position(of: id) else { return }
            counts[position] = Int32(clamping: newValue)
        }
    }
}
