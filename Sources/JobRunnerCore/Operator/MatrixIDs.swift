/// A matrix job's own id where a command takes the id of a stored job (`retry`, `skip`,
/// `cancel`, `logs`). The store keeps only the ids of a run's jobs, and a matrix job's jobs are
/// `<id>-<value>…` (SPEC 3.1); but so may be the ids of jobs that are no matrix's (`deploy-prod`
/// beside `deploy-staging`). A name that is no job of the run is therefore never taken for
/// them: the command lists the ids that begin with it, for the user to name.
public enum MatrixIDs {
    /// The jobs of `ids` whose ids begin with `name` and a dash, in load order; empty when
    /// `name` is a job itself or no id begins so.
    public static func jobs(of name: String, in ids: [String]) -> [String] {
        let prefix = name + "-"
        guard !ids.contains(name) else { return [] }
        return ids.filter { $0.hasPrefix(prefix) }
    }

    /// What a command says of a name that is no job when ids begin with it: those ids (ten at
    /// most), and the command that names them.
    public static func choice(of name: String, among matches: [String], command: String) -> String {
        let listed =
            matches.prefix(10).joined(separator: ", ")
            + (matches.count > 10 ? ", … (\(matches.count) in all)" : "")
        let example =
            command == "logs"
            ? "jobrunner logs \(matches[0])"
            : "jobrunner \(command) \(matches.prefix(3).joined(separator: " "))"
        return
            "no job '\(name)' (a matrix job's own id is not kept with its run); the jobs whose ids begin with '\(name)-' are \(listed): name the ones you mean (\(example))"
    }
}
