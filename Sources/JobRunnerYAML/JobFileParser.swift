import Foundation
import JobRunnerCore

/// Turns one job file's text into definitions, collecting every problem it finds.
struct JobFileParser {
    /// Ids and names: `[A-Za-z0-9_.-]{1,128}` (SPEC 3), except `.` and `..`.
    static func isValidName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 128, name != ".", name != ".." else { return false }
        return name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F || byte == 0x2E || byte == 0x2D
        }
    }

    /// Why `name` cannot be the id or name of `what` ("job id", "pipeline name"), or nil when
    /// it can. An id is a directory name under the state directory's `logs/`, so `.` and `..`
    /// (this directory, its parent) are refused besides what SPEC 3's character set excludes.
    static func nameProblem(_ name: String, what: String) -> String? {
        if name == "." || name == ".." {
            return
                "\(what) \(VisibleText.quoted(name)) is not allowed: '.' and '..' name directories in file paths (a job's logs are kept under its id); choose another name"
        }
        guard !isValidName(name) else { return nil }
        return
            "\(what) \(VisibleText.quoted(name)) may only use letters, digits, '_', '.' and '-' (1 to 128 of them)"
    }

    var reader: NodeReader
    let directory: String
    let fileIndex: Int
    /// What `${NAME}` in `env:` and `with:` reads: the runner's environment (SPEC 3.1).
    let environment: [String: String]
    /// How many parts a large `jobs:` map is parsed in, at most: nil is one pass for
    /// ``parse(text:)``, and parts of ``jobsPerPart`` entries for ``parseConcurrently(text:)``.
    var maxParts: Int?

    init(path: String, fileIndex: Int, environment: [String: String] = [:]) {
        self.environment = environment
        reader = NodeReader(file: path)
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        directory = (absolute as NSString).deletingLastPathComponent
        self.fileIndex = fileIndex
    }

    /// What is left of a file once everything before its jobs is read.
    struct Pending {
        var file: ParsedFile
        var top: Known<TopLevelKey>
        var defaults = Known<JobKey>()
        var jobs: [Entry]?
    }

    /// Parses one file, a large `jobs:` map part after part (see ``maxParts``).
    mutating func parse(text: String) -> ParsedFile {
        guard var pending = parseHead(YAMLComposer.compose(text)) else {
            return ParsedFile(path: reader.file)
        }
        if let jobs = pending.jobs { parseJobs(jobs, defaults: pending.defaults, into: &pending.file) }
        return parseTail(pending)
    }

    /// Parses one file, a large file composed and its `jobs:` map parsed in parts at once.
    mutating func parseConcurrently(text: String) async -> ParsedFile {
        guard var pending = parseHead(await YAMLComposer.composeConcurrently(text)) else {
            return ParsedFile(path: reader.file)
        }
        if let jobs = pending.jobs {
            await parseJobsConcurrently(jobs, defaults: pending.defaults, into: &pending.file)
        }
        return parseTail(pending)
    }

    /// Reads everything before the jobs of a composed file; nil when there is nothing more to
    /// read (a file that does not compose, or holds no map).
    private mutating func parseHead(
        _ composed: Result<(tree: YAMLTree, root: YAMLTree.Node?), YAMLComposer.Failure>
    ) -> Pending? {
        let file = ParsedFile(path: reader.file)
        switch composed {
        case .failure(let failure):
            for problem in failure.all {
                reader.add(
                    Diagnostic(
                        at: SourceLocation(file: reader.file, line: problem.line, column: problem.column),
                        problem.message(in: reader.file)))
            }
            if let counted = failure.counted {
                reader.count(
                    errors: counted.errors,
                    at: SourceLocation(file: reader.file, line: counted.line, column: counted.column))
            }
            return nil
        case .success(let composed):
            guard let root = composed.root else { return nil }
            reader.tree = composed.tree
            return parseHead(root: root, into: file)
        }
    }

    private mutating func parseHead(root: Node, into file: ParsedFile) -> Pending? {
        var file = file
        guard !reader.isNull(root) else { return nil }
        guard let entries = reader.entries(root, what: "a job file") else { return nil }
        let top = reader.known(entries, as: TopLevelKey.self, in: "the top level")
        if let version = top[.version] {
            if reader.int(version.value, what: "version") != 1, reader.plainInt(version.value) != nil {
                reader.error(version.value, "version must be 1, the only version of the job file format")
            }
        }
        if let pipelines = top[.pipelines] {
            file.pipelines = parsePipelines(pipelines.value)
        }
        if let constraints = top[.constraints] {
            file.constraints = parseConstraints(constraints.value)
        }
        if let connectivity = top[.connectivity] {
            file.connectivity = parseConnectivity(connectivity.value).map {
                ($0, reader.location(connectivity.keyNode))
            }
        }
        if let retention = top[.retention], let policy = parseRetention(retention.value, what: "retention") {
            file.retention = (policy, reader.location(retention.keyNode))
        }
        if let notify = top[.notify], let entries = section(notify.value, what: "notify") {
            for entry in entries { if let hook = parseNotify(entry) { file.notify.append(hook) } }
        }
        if let plugins = top[.plugins], let entries = section(plugins.value, what: "plugins") {
            let known = reader.known(entries, as: PluginsKey.self, in: "plugins")
            if let paths = known[.paths], let list = reader.stringList(paths.value, what: "plugins.paths") {
                file.pluginPaths = list.map { path, _ in
                    path.hasPrefix("/")
                        ? path
                        : ((directory as NSString).appendingPathComponent(path) as NSString).standardizingPath
                }
            }
        }
        var pending = Pending(file: file, top: top)
        if let node = top[.defaults], let entries = section(node.value, what: "defaults") {
            pending.defaults = reader.known(entries, as: JobKey.self, in: "defaults")
        }
        if let jobs = top[.jobs] { pending.jobs = section(jobs.value, what: "jobs") }
        return pending
    }

    /// Reads what comes after the jobs: their problems are reported before these.
    private mutating func parseTail(_ pending: Pending) -> ParsedFile {
        var file = pending.file
        let top = pending.top
        if let secrets = top[.secrets], !reader.isNull(secrets.value),
            let names = reader.stringList(secrets.value, what: "secrets")
        {
            for (name, node) in names {
                guard Interpolation.isVariableName(name) else {
                    reader.error(
                        node,
                        "secrets names environment variables; \(VisibleText.quoted(name)) is not one (letters, digits and '_', not starting with a digit)"
                    )
                    continue
                }
                file.secrets.append((name, reader.location(node)))
            }
        }
        return file
    }

    /// The entries of a top-level map section; none for one written with nothing after it
    /// (`jobs:` alone is `jobs: {}`).
    private mutating func section(_ node: Node, what: String) -> [Entry]? {
        reader.isNull(node) ? [] : reader.entries(node, what: what)
    }

    /// A `retention:` map (`runs`, `age`): the file's, or a periodic job's own (SPEC 5.12).
    mutating func parseRetention(_ node: Node, what: String) -> RetentionPolicy? {
        guard let entries = section(node, what: what) else { return nil }
        let known = reader.known(entries, as: RetentionKey.self, in: what)
        var policy = RetentionPolicy()
        if let node = known[.runs]?.value,
            let runs = reader.int(node, what: "\(what).runs", range: 1...1_000_000)
        {
            policy.runs = runs
        }
        if let node = known[.age]?.value,
            let age = reader.duration(node, what: "\(what).age", allowZero: false)
        {
            policy.age = age
        }
        return policy
    }

    var diagnostics: [Diagnostic] { reader.diagnostics }

    /// The problems found, at most ``DiagnosticList/perFile`` of them listed.
    var problems: DiagnosticList { reader.problems }

    private mutating func parsePipelines(_ node: Node) -> [PipelineDefinition] {
        guard let entries = section(node, what: "pipelines") else { return [] }
        var result: [PipelineDefinition] = []
        for entry in entries {
            if let problem = Self.nameProblem(entry.key, what: "pipeline name") {
                reader.error(entry.keyNode, problem)
                continue
            }
            var pipeline = PipelineDefinition(name: entry.key, location: reader.location(entry.keyNode))
            if !reader.isNull(entry.value),
                let fields = reader.entries(entry.value, what: "pipeline \(VisibleText.quoted(entry.key))")
            {
                let known = reader.known(
                    fields, as: PipelineKey.self, in: "pipeline \(VisibleText.quoted(entry.key))")
                if let node = known[.maxConcurrent]?.value,
                    let value = reader.int(node, what: "maxConcurrent", range: 0...1_000_000)
                {
                    pipeline.maxConcurrent = value
                }
                if let node = known[.order]?.value,
                    let value = reader.choice(node, what: "order", as: PipelineOrder.self)
                {
                    pipeline.order = value
                }
                if let node = known[.requiresInternet]?.value,
                    let value = reader.bool(node, what: "requiresInternet")
                {
                    pipeline.requiresInternet = value
                }
            }
            result.append(pipeline)
        }
        return result
    }

    private mutating func parseConstraints(_ node: Node) -> [(
        definition: ConstraintDefinition, location: SourceLocation
    )] {
        guard let entries = section(node, what: "constraints") else { return [] }
        var result: [(definition: ConstraintDefinition, location: SourceLocation)] = []
        for entry in entries {
            if let problem = Self.nameProblem(entry.key, what: "constraint name") {
                reader.error(entry.keyNode, problem)
                continue
            }
            let what = "constraint \(VisibleText.quoted(entry.key))"
            var definition = ConstraintDefinition(
                name: entry.key, check: "", satisfy: "", workingDirectory: directory)
            if let fields = reader.entries(entry.value, what: what) {
                let known = reader.known(fields, as: ConstraintKey.self, in: what)
                for key in [ConstraintKey.check, .satisfy] {
                    let name = ConstraintKey.names[key.rawValue]
                    guard let value = known[key]?.value else {
                        reader.error(entry.keyNode, "\(what) needs a \(VisibleText.quoted(name)) command")
                        continue
                    }
                    let command = reader.nonEmptyString(value, what: "\(name) of \(what)") ?? ""
                    if key == .check { definition.check = command } else { definition.satisfy = command }
                }
                if let value = known[.timeout]?.value,
                    let timeout = reader.duration(value, what: "timeout", allowZero: false)
                {
                    definition.timeout = timeout
                }
            }
            result.append((definition, reader.location(entry.keyNode)))
        }
        return result
    }

    private mutating func parseConnectivity(_ node: Node) -> ConnectivitySettings? {
        guard let entries = section(node, what: "connectivity") else { return nil }
        let known = reader.known(entries, as: ConnectivityKey.self, in: "connectivity")
        var settings = ConnectivitySettings(workingDirectory: directory)
        if let probe = known[.probe]?.value {
            settings.probe = reader.nonEmptyString(probe, what: "connectivity.probe")
        }
        if let node = known[.interval]?.value,
            let interval = reader.duration(node, what: "connectivity.interval", allowZero: false)
        {
            settings.interval = interval
        }
        return settings
    }
}
