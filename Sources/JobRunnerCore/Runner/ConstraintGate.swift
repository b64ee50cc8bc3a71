/// Which jobs stand at their constraints (SPEC 5.6): being checked, cleared to start, or waiting
/// for a constraint's `satisfy`, which runs once at a time per constraint and is shared by every
/// job waiting on it.
struct ConstraintGate {
    /// Jobs whose constraints are being checked: no attempt, no slot.
    private var checking = Set<String>()
    /// Jobs whose constraints held (or were just satisfied): their next start skips the check.
    private var cleared = Set<String>()
    private var waiting: [String: [String]] = [:]
    private var satisfying = Set<String>()

    /// Whether a job about to start must have its constraints checked first; if so, it is now
    /// being checked. A cleared job passes once.
    mutating func mustCheck(_ job: RunPlan.Job) -> Bool {
        guard !job.constraints.isEmpty else { return false }
        if cleared.remove(job.id) != nil { return false }
        checking.insert(job.id)
        return true
    }

    /// The checks of `jobID` ended; false when it was not being checked.
    mutating func checked(_ jobID: String) -> Bool { checking.remove(jobID) != nil }

    /// The job may start without another check.
    mutating func clear(_ jobID: String) { cleared.insert(jobID) }

    /// The job waits for `constraint`'s `satisfy`; true when that `satisfy` must be started.
    mutating func wait(_ jobID: String, for constraint: String) -> Bool {
        waiting[constraint, default: []].append(jobID)
        return satisfying.insert(constraint).inserted
    }

    /// `constraint`'s `satisfy` ended: the jobs that waited on it, in the order they came.
    mutating func satisfyEnded(_ constraint: String) -> [String] {
        satisfying.remove(constraint)
        return waiting.removeValue(forKey: constraint) ?? []
    }

    /// Whether any check or `satisfy` is under way.
    var isBusy: Bool { !checking.isEmpty || !satisfying.isEmpty }
}
