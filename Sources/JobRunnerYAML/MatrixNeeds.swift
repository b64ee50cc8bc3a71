import JobRunnerCore

/// `needs: [job]` on a matrix job means every job of its matrix (SPEC 3.1): the jobs of all
/// files with such needs written out, before the checks that span files.
enum MatrixNeeds {
    /// Replaces each need of a matrix job's id by the ids of its matrix's jobs, in place (the
    /// arrays are left untouched when there is no matrix).
    /// - Returns: the jobs of each matrix by the matrix job's id, and a problem for each job
    ///   whose id a matrix job also has: `needs:` could not tell which is meant.
    static func expand(
        _ jobs: inout [JobDefinition], places: inout [JobPlaces]
    ) -> (matrices: [String: [String]], problems: [Diagnostic]) {
        var groups: [String: [String]] = [:]
        var firstPlace: [String: SourceLocation] = [:]
        // By index: a copy of each job would retain and release all its values.
        for index in places.indices {
            if let base = places[index].matrixOf {
                groups[base, default: []].append(jobs[index].id)
                firstPlace[base] = firstPlace[base] ?? jobs[index].location
            }
        }
        guard !groups.isEmpty else { return ([:], []) }
        var clashes: [Diagnostic] = []
        for (job, place) in zip(jobs, places) where place.matrixOf == nil {
            if let first = firstPlace[job.id] {
                clashes.append(
                    Diagnostic(
                        at: job.location,
                        "job id \(VisibleText.quoted(job.id)) is also the id of the matrix job at \(first); needs could not tell them apart, so rename one"
                    ))
            }
        }
        for index in jobs.indices {
            var needs: [String] = []
            var marks = Marks()
            var seen = Set<String>()
            for (need, mark) in zip(jobs[index].needs, places[index].needMarks) {
                for id in groups[need] ?? [need] where seen.insert(id).inserted {
                    needs.append(id)
                    marks.append(mark)
                }
            }
            jobs[index].needs = needs
            places[index].needMarks = marks
        }
        return (groups, clashes)
    }
}
