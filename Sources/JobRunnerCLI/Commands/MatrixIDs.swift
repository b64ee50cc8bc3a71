/// A matrix job's own id where a command takes the id of a stored job (`retry`, `skip`,
/// `cancel`, `logs`). The store keeps only the ids of a run's jobs, and a matrix job's jobs
/// are `<id>-<value>…` (SPEC 3.1); so a name that is no job of the run stands for the jobs whose
/// ids begin with it and a dash.
enum MatrixIDs {
    /// The jobs of `ids` that `name` stands for as a matrix job's id, in load order; empty when
    /// `name` is a job itself or no id begins with `name-`.
    static func jobs(of name: String, in ids: [String]) -> [String] {
        let prefix = name + "-"
        guard !ids.contains(name) else { return [] }
        return ids.filter { $0.hasPrefix(prefix) }
    }
}
