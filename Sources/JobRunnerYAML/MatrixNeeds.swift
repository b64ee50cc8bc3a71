import JobRunnerCore

/// `needs: [job]` on a matrix job means every job of its matrix (SPEC 3.1): the jobs of all
/// files with such needs written out, before the checks that span files.
struct MatrixNeeds {
    /// The jobs, each need of a matrix job's id replaced by the ids of its matrix's jobs.
    private(set) var jobs: [ParsedJob]
    /// A matrix job whose id another job also has: `needs:` could not tell which is meant.
    private(set) var clashes: [Diagnostic] = []

    init(_ jobs: [ParsedJob]) {
        var groups: [String: [String]] = [:]
        var firstPlace: [String: SourceLocation] = [:]
        for job in jobs {
            if let base = job.matrixOf {
                groups[base, default: []].append(job.definition.id)
                firstPlace[base] = firstPlace[base] ?? job.definition.location
            }
        }
        self.jobs = jobs
        guard !groups.isEmpty else { return }
        for job in jobs where job.matrixOf == nil {
            if let place = firstPlace[job.definition.id] {
                clashes.append(
                    Diagnostic(
                        at: job.definition.location,
                        "job id '\(job.definition.id)' is also the id of the matrix job at \(place); needs could not tell them apart, so rename one"
                    ))
            }
        }
        for index in self.jobs.indices {
            var needs: [String] = []
            var locations: [SourceLocation] = []
            var seen = Set<String>()
            let job = self.jobs[index]
            for (need, location) in zip(job.definition.needs, job.needLocations) {
                for id in groups[need] ?? [need] where seen.insert(id).inserted {
                    needs.append(id)
                    locations.append(location)
                }
            }
            self.jobs[index].definition.needs = needs
            self.jobs[index].needLocations = locations
        }
    }
}
