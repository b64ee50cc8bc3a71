extension Workload {
    /// The jobs named and every job they need, directly or through others (`run --only`), with
    /// the rest of the workload's settings; the unknown names when any is not a job. A matrix
    /// job's own id names all of its jobs, as in `needs:`.
    public func only(_ ids: [String]) -> Result<Workload, UnknownJobs> {
        let unknown = ids.filter { job($0) == nil && matrices[$0] == nil }
        guard unknown.isEmpty else {
            return .failure(UnknownJobs(names: unknown, known: jobs.map(\.id) + matrices.keys.sorted()))
        }
        var kept = Set<String>()
        var pending = ids.flatMap { matrices[$0] ?? [$0] }
        while let id = pending.popLast() {
            guard kept.insert(id).inserted, let definition = job(id) else { continue }
            pending.append(contentsOf: definition.needs)
        }
        return .success(
            Workload(
                jobs: jobs.filter { kept.contains($0.id) }, pipelines: Array(pipelines.values),
                connectivity: connectivity, constraints: Array(constraints.values), pluginPaths: pluginPaths,
                retention: retention, secrets: secrets,
                matrices: matrices.filter { $0.value.contains(where: kept.contains) }, notify: notify))
    }

    /// Names given for jobs that the workload does not have.
    public struct UnknownJobs: Error, Sendable, CustomStringConvertible {
        public var names: [String]
        public var known: [String]

        public var description: String {
            names.map { "no job '\($0)'\(Suggestion.hint(for: $0, in: known))" }.joined(separator: "; ")
        }
    }
}
