import JobRunnerCore

extension JobFileParser {
    /// A part of a large `jobs:` map holds this many entries (the last part up to twice as many).
    static let jobsPerPart = 4096

    /// One part of a `jobs:` map, parsed on its own: its jobs in file order and its problems.
    struct ParsedPart: Sendable {
        var jobs: [JobDefinition] = []
        var places: [JobPlaces] = []
        var problems = DiagnosticList()
    }

    /// Where the parts of `count` entries start, and the end: parts of ``jobsPerPart`` entries,
    /// at most `maxParts` of them (nil: no limit).
    static func partBounds(count: Int, maxParts: Int?) -> [Int] {
        let parts = max(1, min(maxParts ?? Int.max, count / jobsPerPart))
        return (0...parts).map { count * $0 / parts }
    }

    /// Parses the entries under `jobs:` into `file`, in file order, part after part (see
    /// ``parseJobsConcurrently(_:defaults:into:)``); without `maxParts`, in one pass.
    mutating func parseJobs(_ entries: [Entry], defaults: Known<JobKey>, into file: inout ParsedFile) {
        let bounds = Self.partBounds(count: entries.count, maxParts: maxParts ?? 1)
        file.jobs.reserveCapacity(file.jobs.count + entries.count)
        file.places.reserveCapacity(file.places.count + entries.count)
        guard bounds.count > 2 else {
            for entry in entries { parseJob(entry, defaults: defaults, into: &file) }
            return
        }
        for part in 0..<bounds.count - 1 {
            join(parsePart(entries[bounds[part]..<bounds[part + 1]], defaults: defaults), into: &file)
        }
    }

    /// Parses the entries under `jobs:` into `file`, in file order, a large map in parts at
    /// once, as many as the processors take.
    ///
    /// Each part reads the same composed tree and collects its own jobs and problems, and the
    /// parts are joined in order as they are done, each let go once joined, so that only a few
    /// parts' jobs are ever held twice. Joining gives what one pass gives: jobs in file order,
    /// and problems sorted by place, where a later part's problem comes after an earlier part's
    /// at the same place, as it would have come later in one pass.
    mutating func parseJobsConcurrently(
        _ entries: [Entry], defaults: Known<JobKey>, into file: inout ParsedFile
    ) async {
        let bounds = Self.partBounds(count: entries.count, maxParts: maxParts)
        guard bounds.count > 2 else {
            parseJobs(entries, defaults: defaults, into: &file)
            return
        }
        file.jobs.reserveCapacity(file.jobs.count + entries.count)
        file.places.reserveCapacity(file.places.count + entries.count)
        let base = self
        var problems = DiagnosticList()
        await withTaskGroup(of: (index: Int, part: ParsedPart).self) { group in
            for part in 0..<bounds.count - 1 {
                group.addTask {
                    (part, base.parsePart(entries[bounds[part]..<bounds[part + 1]], defaults: defaults))
                }
            }
            // Parts that end before an earlier one wait here for it.
            var done: [Int: ParsedPart] = [:]
            var next = 0
            for await (index, part) in group {
                done[index] = part
                while let ready = done.removeValue(forKey: next) {
                    file.jobs.append(contentsOf: ready.jobs)
                    file.places.append(contentsOf: ready.places)
                    problems.append(ready.problems)
                    next += 1
                }
            }
        }
        reader.add(problems)
    }

    /// The jobs and problems of some entries under `jobs:`, parsed apart from the rest.
    func parsePart(_ entries: ArraySlice<Entry>, defaults: Known<JobKey>) -> ParsedPart {
        var parser = self
        parser.reader = NodeReader(file: reader.file, tree: reader.tree)
        var own = ParsedFile(path: reader.file)
        own.jobs.reserveCapacity(entries.count)
        own.places.reserveCapacity(entries.count)
        for entry in entries { parser.parseJob(entry, defaults: defaults, into: &own) }
        return ParsedPart(jobs: own.jobs, places: own.places, problems: parser.reader.problems)
    }

    /// Adds a part's jobs after those of `file`, and its problems after this reader's.
    private mutating func join(_ part: consuming ParsedPart, into file: inout ParsedFile) {
        file.jobs.append(contentsOf: part.jobs)
        file.places.append(contentsOf: part.places)
        reader.add(part.problems)
    }
}
