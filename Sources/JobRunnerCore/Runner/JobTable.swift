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
