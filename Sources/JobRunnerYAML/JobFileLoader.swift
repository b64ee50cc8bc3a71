import Foundation
import Glibc
import JobRunnerCore

/// Loads job files and checks everything that can be checked before a run (SPEC 3).
public enum JobFileLoader {
    /// The outcome of a load: a workload when there were no errors, and every diagnostic found.
    public struct Result: Sendable {
        /// The checked jobs; nil when any diagnostic is an error.
        public var workload: Workload?
        /// Every problem found, sorted by location.
        public var diagnostics: [Diagnostic]
        /// The files read, in load order.
        public var files: [String]
        /// The jobs as read, also when there were errors: what the checks this module cannot
        /// make (plugins) look at, so that every problem is reported at once.
        public var jobsAsRead: Workload
        /// Every problem, at most ``DiagnosticList/perFile`` of them listed per file.
        private let problems: DiagnosticList

        init(jobsAsRead: Workload, problems: DiagnosticList, files: [String]) {
            // The jobs of one matrix share their places in the file, and so their problems.
            var seen = Set<Diagnostic>()
            let sorted = problems.all.sortedByLocation().filter { seen.insert($0).inserted }
            self.workload = sorted.hasErrors ? nil : jobsAsRead
            self.diagnostics = sorted
            self.files = files
            self.jobsAsRead = jobsAsRead
            self.problems = problems
        }

        /// This result with the problems found by a check this module cannot make (plugins);
        /// an error among them takes the workload away.
        public func adding(_ more: [Diagnostic]) -> Result {
            var problems = self.problems
            problems.append(contentsOf: more)
            return Result(jobsAsRead: jobsAsRead, problems: problems, files: files)
        }
    }

    /// Finds the job files among `paths`: files as given, directories searched recursively for
    /// `*.yaml` and `*.yml`, in sorted path order. A file named twice (as itself and in its
    /// directory, through a link, as `./a.yaml` and `a.yaml`) is taken once, where it is first
    /// named, so that its jobs are not loaded twice (and taken for duplicates of themselves).
    public static func jobFiles(in paths: [String]) -> (files: [String], diagnostics: [Diagnostic]) {
        let (files, diagnostics) = namedFiles(in: paths)
        var seen = Set<String>()
        return (files.filter { seen.insert(realPath($0) ?? $0).inserted }, diagnostics)
    }

    /// A file's path with every link, `.` and `..` resolved; nil when it cannot be told.
    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The job files among `paths` as they are named, a file named twice listed twice.
    private static func namedFiles(in paths: [String]) -> (files: [String], diagnostics: [Diagnostic]) {
        let search = JobFileSearch(paths: paths)
        return (search.files, search.diagnostics)
    }

    /// Loads and checks the job files among `paths` (files and directories), one file and one
    /// part of a file after another on this thread; checks this module cannot make are added
    /// with ``Result/adding(_:)``.
    /// - Parameter environment: what `${NAME}` in `env:` and `with:` reads (SPEC 3.1).
    public static func load(
        paths: [String], environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Result {
        let (files, found) = jobFiles(in: paths)
        var diagnostics = DiagnosticList()
        diagnostics.append(contentsOf: found)
        var parsed: [ParsedFile] = []
        for (index, file) in files.enumerated() {
            switch text(of: file) {
            case .failure(let unreadable): diagnostics.append(unreadable.diagnostic)
            case .success(let text):
                var parser = JobFileParser(path: file, fileIndex: index, environment: environment)
                parsed.append(parser.parse(text: text))
                diagnostics.append(parser.problems)
            }
        }
        let (workload, crossFile) = checkAll(parsed)
        diagnostics.append(contentsOf: crossFile)
        return Result(jobsAsRead: workload, problems: diagnostics, files: files)
    }

    /// ``load(paths:environment:)``, the jobs of a large file parsed in parts at once: what a
    /// command loads with.
    public static func loadConcurrently(
        paths: [String], environment: [String: String] = ProcessInfo.processInfo.environment
    ) async -> Result {
        let (files, found) = jobFiles(in: paths)
        var diagnostics = DiagnosticList()
        diagnostics.append(contentsOf: found)
        var parsed: [ParsedFile] = []
        for (index, file) in files.enumerated() {
            switch text(of: file) {
            case .failure(let unreadable): diagnostics.append(unreadable.diagnostic)
            case .success(let text):
                var parser = JobFileParser(path: file, fileIndex: index, environment: environment)
                parsed.append(await parser.parseConcurrently(text: text))
                diagnostics.append(parser.problems)
            }
        }
        let (workload, crossFile) = checkAll(parsed)
        diagnostics.append(contentsOf: crossFile)
        return Result(jobsAsRead: workload, problems: diagnostics, files: files)
    }

    /// A job file's text, or why it cannot be loaded.
    private static func text(of file: String) -> Swift.Result<String, Unreadable> {
        Swift.Result { () throws(Unreadable) in try readText(file) }
    }

    /// The largest job file loaded: far beyond any hand-written one, small enough that parsing
    /// it stays within a few GiB of memory.
    static let maxFileSize = 64 << 20

    private struct Unreadable: Error {
        var diagnostic: Diagnostic
    }

    /// A file's text; its bytes are let go before it is parsed. The file is opened without
    /// waiting (a FIFO put in its place since it was found must not hang the load) and is
    /// checked to be a regular file before anything is read.
    private static func readText(_ file: String) throws(Unreadable) -> String {
        let start = SourceLocation(file: file, line: 1, column: 1)
        func fail(_ message: String) -> Unreadable { Unreadable(diagnostic: Diagnostic(at: start, message)) }
        let descriptor = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw fail(JobFileSearch.problem(errno, path: file, isDirectory: false).message)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw fail(JobFileSearch.problem(errno, path: file, isDirectory: false).message)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw fail(JobFileSearch.notRegular(JobFileSearch.describe(mode: info.st_mode)).message)
        }
        let size = Int(info.st_size)
        guard size <= maxFileSize else {
            throw fail(
                "this file has \(size) bytes; job files may have at most \(maxFileSize) (64 MiB): split it")
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var count = 0
        // A file that grows while it is read is read as far as it was long when opened.
        while count < size {
            let read = bytes.withUnsafeMutableBytes { buffer in
                buffer.baseAddress.map { Glibc.read(descriptor, $0 + count, size - count) } ?? 0
            }
            if read == 0 { break }
            if read < 0 {
                if errno == EINTR { continue }
                throw fail(JobFileSearch.problem(errno, path: file, isDirectory: false).message)
            }
            count += read
        }
        guard let text = String(validating: bytes[0..<count], as: UTF8.self) else {
            throw fail("this file is not UTF-8 text")
        }
        return text
    }

    /// Loads job files from text, for tests and tools: `(path, text)` pairs in load order.
    public static func load(
        texts: [(path: String, text: String)],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Result {
        load(texts: texts, environment: environment, maxParts: nil)
    }

    /// ``load(texts:environment:)``, a large `jobs:` map parsed in at most `maxParts` parts,
    /// one after another (nil: in one pass).
    static func load(
        texts: [(path: String, text: String)], environment: [String: String], maxParts: Int?
    ) -> Result {
        var diagnostics = DiagnosticList()
        var parsed: [ParsedFile] = []
        for (index, file) in texts.enumerated() {
            var parser = JobFileParser(path: file.path, fileIndex: index, environment: environment)
            parser.maxParts = maxParts
            parsed.append(parser.parse(text: file.text))
            diagnostics.append(parser.problems)
        }
        let (workload, crossFile) = checkAll(parsed)
        diagnostics.append(contentsOf: crossFile)
        return Result(jobsAsRead: workload, problems: diagnostics, files: texts.map(\.path))
    }

    /// ``load(texts:environment:maxParts:)``, the parts parsed at once (nil: parts of
    /// ``JobFileParser/jobsPerPart`` entries).
    static func loadConcurrently(
        texts: [(path: String, text: String)], environment: [String: String], maxParts: Int?
    ) async -> Result {
        var diagnostics = DiagnosticList()
        var parsed: [ParsedFile] = []
        for (index, file) in texts.enumerated() {
            var parser = JobFileParser(path: file.path, fileIndex: index, environment: environment)
            parser.maxParts = maxParts
            parsed.append(await parser.parseConcurrently(text: file.text))
            diagnostics.append(parser.problems)
        }
        let (workload, crossFile) = checkAll(parsed)
        diagnostics.append(contentsOf: crossFile)
        return Result(jobsAsRead: workload, problems: diagnostics, files: texts.map(\.path))
    }

    /// The jobs of the parsed files, and the problems of the checks that span files.
    static func checkAll(_ parsed: [ParsedFile]) -> (Workload, [Diagnostic]) {
        let (workload, crossFile) = check(parsed)
        return (workload, crossFile)
    }

    /// The checks that span files: duplicate ids and pipelines, unknown needs, pipelines and
    /// constraints, and cycles.
    static func check(_ files: [ParsedFile]) -> (Workload, [Diagnostic]) {
        var diagnostics: [Diagnostic] = []
        var pipelines: [String: PipelineDefinition] = [:]
        for pipeline in files.flatMap(\.pipelines) {
            if let first = pipelines[pipeline.name], let location = pipeline.location {
                diagnostics.append(
                    Diagnostic(
                        at: location,
                        "pipeline \(VisibleText.quoted(pipeline.name)) is declared twice; the first is at \(first.location?.description ?? "?")"
                    ))
                continue
            }
            pipelines[pipeline.name] = pipeline
        }
        var constraints: [String: SourceLocation] = [:]
        var constraintDefinitions: [ConstraintDefinition] = []
        for (definition, location) in files.flatMap(\.constraints) {
            let constraint = (name: definition.name, location: location)
            if let first = constraints[constraint.name] {
                diagnostics.append(
                    Diagnostic(
                        at: constraint.location,
                        "constraint \(VisibleText.quoted(constraint.name)) is declared twice; the first is at \(first)"
                    ))
                continue
            }
            constraints[constraint.name] = constraint.location
            constraintDefinitions.append(definition)
        }

        var byID: [String: Int] = [:]
        var jobs: [JobDefinition]
        var places: [JobPlaces]
        // One file's arrays are taken as they are (shared, not copied).
        if files.count == 1 {
            jobs = files[0].jobs
            places = files[0].places
        } else {
            jobs = files.flatMap(\.jobs)
            places = files.flatMap(\.places)
        }
        let (matrices, clashes) = MatrixNeeds.expand(&jobs, places: &places)
        diagnostics += clashes
        byID.reserveCapacity(jobs.count)
        var repeated: [Int] = []
        // By index, here and below: a copy of each job would retain and release all its values.
        for index in jobs.indices {
            let id = jobs[index].id
            guard let first = byID.updateValue(index, forKey: id) else { continue }
            byID[id] = first
            repeated.append(index)
            let (location, firstLocation) = (jobs[index].location, jobs[first].location)
            diagnostics.append(
                Diagnostic(
                    at: location,
                    "duplicate job id \(VisibleText.quoted(id)); it is also defined at \(firstLocation)"))
            diagnostics.append(
                Diagnostic(
                    at: firstLocation,
                    "duplicate job id \(VisibleText.quoted(id)); it is also defined at \(location)"))
        }
        if !repeated.isEmpty {
            // Only the first job of an id stays, and the later ones move up.
            let dropped = Set(repeated)
            jobs = jobs.indices.filter { !dropped.contains($0) }.map { jobs[$0] }
            places = places.indices.filter { !dropped.contains($0) }.map { places[$0] }
            byID = [:]
            for (index, job) in jobs.enumerated() { byID[job.id] = index }
        }
        lazy var ids = jobs.map(\.id)
        let pipelineNames = pipelines.keys.sorted() + [PipelineDefinition.defaultName]
        // The needs of job i, as indices, are needed[starts[i]..<starts[i + 1]].
        var starts: [Int] = []
        var needed: [Int] = []
        starts.reserveCapacity(jobs.count + 1)
        var declaredPipeline = ""
        // Unknown needs met so far in each file.
        var unknownNeeds: [String: Int] = [:]
        for index in jobs.indices {
            starts.append(needed.count)
            let definition = (
                // `schedule`, not `isPeriodic`: a getter of another module is given a copy of the
                // whole job, retaining and releasing each of its values.
                id: jobs[index].id, pipeline: jobs[index].pipeline, isPeriodic: jobs[index].schedule != nil
            )
            let file = jobs[index].location.file
            for (need, mark) in zip(jobs[index].needs, places[index].needMarks) {
                guard let target = byID[need] else {
                    // A did-you-mean compares the name with every job's: only for the problems
                    // a file can list, not for thousands that are only counted.
                    let hinted = unknownNeeds[file, default: 0] < DiagnosticList.perFile
                    unknownNeeds[file, default: 0] += 1
                    diagnostics.append(
                        Diagnostic(
                            at: mark.location(in: file),
                            "job \(VisibleText.quoted(definition.id)) needs \(VisibleText.quoted(need)), which no loaded file defines\(hinted ? Suggestion.hint(for: need, in: ids) : "")"
                        ))
                    continue
                }
                needed.append(target)
                // SPEC 5.8: a one-shot job runs once per run; an occurrence of a periodic job
                // is a run of its own, so there is no "its" occurrence to wait for.
                if !definition.isPeriodic, jobs[target].schedule != nil {
                    diagnostics.append(
                        Diagnostic(
                            at: mark.location(in: file),
                            "job \(VisibleText.quoted(definition.id)) runs once per run and cannot need \(VisibleText.quoted(need)), a periodic job; only periodic jobs may need periodic jobs"
                        ))
                }
            }
            // Most jobs name the pipeline the one before them named.
            if definition.pipeline != PipelineDefinition.defaultName, definition.pipeline != declaredPipeline
            {
                if pipelines[definition.pipeline] != nil {
                    declaredPipeline = definition.pipeline
                } else {
                    diagnostics.append(
                        Diagnostic(
                            at: places[index].pipelineMark.location(in: file),
                            "pipeline \(VisibleText.quoted(definition.pipeline)) is not declared under 'pipelines:'\(Suggestion.hint(for: definition.pipeline, in: pipelineNames))"
                        ))
                }
            }
            for (name, mark) in zip(jobs[index].constraints, places[index].constraintMarks)
            where constraints[name] == nil {
                diagnostics.append(
                    Diagnostic(
                        at: mark.location(in: file),
                        "constraint \(VisibleText.quoted(name)) is not declared under 'constraints:'\(Suggestion.hint(for: name, in: constraints.keys.sorted()))"
                    ))
            }
        }
        starts.append(needed.count)
        for cycle in Self.findCycles(starts: starts, needed: needed) {
            diagnostics.append(
                Diagnostic(
                    at: jobs[cycle[0]].location,
                    "dependency cycle: \(cycle.map { jobs[$0].id }.joined(separator: " -> "))"))
        }
        /// A top-level section that only one file may declare: the first, and an error at each other.
        func single<Value>(_ name: String, _ declared: (ParsedFile) -> (Value, SourceLocation)?) -> Value? {
            var first: (value: Value, location: SourceLocation)?
            for file in files {
                guard let (value, location) = declared(file) else { continue }
                if let first {
                    diagnostics.append(
                        Diagnostic(
                            at: location,
                            "\(name) is declared twice; the first is at \(first.location); keep one"))
                } else {
                    first = (value, location)
                }
            }
            return first?.value
        }
        let connectivity = single("connectivity") { $0.connectivity } ?? ConnectivitySettings()
        let retention = single("retention") { $0.retention } ?? RetentionPolicy()
        // `notify:` hooks: names unique across files, and each job they name known.
        var hooks: [NotifyHook] = []
        var hookPlaces: [String: SourceLocation] = [:]
        for file in files {
            for (hook, marks) in file.notify {
                if let first = hookPlaces[hook.name] {
                    diagnostics.append(
                        Diagnostic(
                            at: hook.location ?? first,
                            "notify hook \(VisibleText.quoted(hook.name)) is declared twice; the first is at \(first); keep one"
                        ))
                    continue
                }
                hookPlaces[hook.name] = hook.location
                for (name, location) in marks where byID[name] == nil && matrices[name] == nil {
                    diagnostics.append(
                        Diagnostic(
                            at: location,
                            "notify hook \(VisibleText.quoted(hook.name)) names job \(VisibleText.quoted(name)), which no job file has\(Suggestion.hint(for: name, in: jobs.map(\.id)))"
                        ))
                }
                var expanded = hook
                expanded.jobs = hook.jobs.map { names in names.flatMap { matrices[$0] ?? [$0] } }
                hooks.append(expanded)
            }
        }
        let workload = Workload(
            jobs: jobs, pipelines: Array(pipelines.values), connectivity: connectivity,
            constraints: constraintDefinitions, pluginPaths: files.flatMap(\.pluginPaths),
            retention: retention, secrets: files.flatMap { $0.secrets.map(\.name) }, matrices: matrices,
            positions: byID, notify: hooks)
        return (workload, diagnostics)
    }
}
