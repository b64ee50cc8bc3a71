import Dispatch
import Foundation
import JobRunnerCore
import Synchronization

extension JobFileParser {
    /// A file with at least this many entries under `jobs:` has them parsed in parts at once.
    static let jobsPerPart = 4096

    /// Parses the entries under `jobs:` into `file`, in file order.
    ///
    /// A large file's entries are parsed in a few parts at once, one per processor: each part
    /// reads the same composed tree and collects its own jobs and problems, and the parts are
    /// joined in order. Joining gives what one pass gives: jobs in file order, and problems
    /// sorted by place, where a later part's problem comes after an earlier part's at the same
    /// place, as it would have come later in one pass.
    mutating func parseJobs(_ entries: [Entry], defaults: Known<JobKey>, into file: inout ParsedFile) {
        let processors = maxParts ?? ProcessInfo.processInfo.activeProcessorCount
        let parts = min(max(1, processors), 4, entries.count / Self.jobsPerPart)
        guard parts > 1 else {
            file.jobs.reserveCapacity(entries.count)
            file.places.reserveCapacity(entries.count)
            for entry in entries { parseJob(entry, defaults: defaults, into: &file) }
            return
        }
        // The first part is parsed here, into `file` itself; the others beside it, each into a
        // file of its own that is appended after.
        let bounds = (0...parts).map { entries.count * $0 / parts }
        let base = self
        let path = file.path
        let results = Mutex<[(file: ParsedFile, problems: DiagnosticList)?]>(
            Array(repeating: nil, count: parts))
        let others = DispatchGroup()
        for part in 1..<parts {
            DispatchQueue.global().async(group: others) {
                var parser = base
                parser.reader = NodeReader(file: base.reader.file, tree: base.reader.tree)
                var own = ParsedFile(path: path)
                own.jobs.reserveCapacity(bounds[part + 1] - bounds[part])
                own.places.reserveCapacity(bounds[part + 1] - bounds[part])
                for entry in entries[bounds[part]..<bounds[part + 1]] {
                    parser.parseJob(entry, defaults: defaults, into: &own)
                }
                let result = (own, parser.reader.problems)
                results.withLock { $0[part] = result }
            }
        }
        file.jobs.reserveCapacity(entries.count)
        file.places.reserveCapacity(entries.count)
        for entry in entries[bounds[0]..<bounds[1]] { parseJob(entry, defaults: defaults, into: &file) }
        others.wait()
        var joined = results.withLock { parts in
            defer { parts = [] }
            return parts
        }
        for part in joined.indices {
            guard let (own, problems) = joined[part] else { continue }
            // Each part's jobs are let go once copied, so that at most one is held twice.
            joined[part] = nil
            file.jobs.append(contentsOf: own.jobs)
            file.places.append(contentsOf: own.places)
            reader.add(problems)
        }
    }
}
