import Foundation
import JobRunnerCore
import Yams

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
                "\(what) '\(name)' is not allowed: '.' and '..' name directories in file paths (a job's logs are kept under its id); choose another name"
        }
        guard !isValidName(name) else { return nil }
        return "\(what) '\(name)' may only use letters, digits, '_', '.' and '-' (1 to 128 of them)"
    }

    var reader: NodeReader
    let directory: String
    let fileIndex: Int
    /// What `${NAME}` in `env:` and `with:` reads: the runner's environment (SPEC 3.1).
    let environment: [String: String]

    init(path: String, fileIndex: Int, environment: [String: String] = [:]) {
        self.environment = environment
        reader = NodeReader(file: path)
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        directory = (absolute as NSString).deletingLastPathComponent
        self.fileIndex = fileIndex
    }

    mutating func parse(text: String) -> ParsedFile {
        var file = ParsedFile(path: reader.file)
        let root: Node?
        do {
            // Without a `*` there is no alias, and nothing to count: most files skip the pass.
            if text.utf8.contains(UInt8(ascii: "*")) { try AliasBudget.check(text) }
        } catch {
            reader.add(
                Diagnostic(
                    at: SourceLocation(file: reader.file, line: error.line, column: error.column),
                    error.message))
            return file
        }
        do {
            root = try Yams.compose(yaml: text, .basic)
        } catch let error as YamlError {
            reader.add(Self.diagnostic(for: error, file: reader.file))
            return file
        } catch {
            reader.add(
                Diagnostic(
                    at: SourceLocation(file: reader.file, line: 1, column: 1), "cannot parse YAML: \(error)"))
            return file
        }
        guard let root, !NodeReader.isNull(root) else { return file }
        guard let entries = reader.entries(root, what: "a job file") else { return file }
        let top = reader.known(entries, allowed: JobFileKeys.topLevel, in: "the top level")

        if let version = top["version"] {
            if reader.int(version.value, what: "version") != 1, NodeReader.plainInt(version.value) != nil {
                reader.error(version.value, "version must be 1, the only version of the job file format")
            }
        }
        if let pipelines = top["pipelines"] {
            file.pipelines = parsePipelines(pipelines.value)
        }
        if let constraints = top["constraints"] {
            file.constraints = parseConstraints(constraints.value)
        }
        if let connectivity = top["connectivity"] {
            file.connectivity = parseConnectivity(connectivity.value).map {
                ($0, reader.location(connectivity.keyNode))
            }
        }
        if let retention = top["retention"], let entries = reader.entries(retention.value, what: "retention")
        {
            let known = reader.known(entries, allowed: JobFileKeys.retention, in: "retention")
            var policy = RetentionPolicy()
            if let node = known["runs"]?.value,
                let runs = reader.int(node, what: "retention.runs", range: 1...1_000_000)
            {
                policy.runs = runs
            }
            if let node = known["age"]?.value,
                let age = reader.duration(node, what: "retention.age", allowZero: false)
            {
                policy.age = age
            }
            file.retention = (policy, reader.location(retention.keyNode))
        }
        if let plugins = top["plugins"], let entries = reader.entries(plugins.value, what: "plugins") {
            let known = reader.known(entries, allowed: JobFileKeys.plugins, in: "plugins")
            if let paths = known["paths"], let list = reader.stringList(paths.value, what: "plugins.paths") {
                file.pluginPaths = list.map { path, _ in
                    path.hasPrefix("/")
                        ? path
                        : ((directory as NSString).appendingPathComponent(path) as NSString).standardizingPath
                }
            }
        }
        var defaults: [String: Entry] = [:]
        if let node = top["defaults"], let entries = reader.entries(node.value, what: "defaults") {
            defaults = reader.known(entries, allowed: JobFileKeys.job, in: "defaults")
        }
        if let jobs = top["jobs"], let entries = reader.entries(jobs.value, what: "jobs") {
            for entry in entries {
                file.jobs.append(contentsOf: parseJob(entry, defaults: defaults))
            }
        }
        if let secrets = top["secrets"], !NodeReader.isNull(secrets.value),
            let names = reader.stringList(secrets.value, what: "secrets")
        {
            for (name, node) in names {
                guard Interpolation.isVariableName(name) else {
                    reader.error(
                        node,
                        "secrets names environment variables; '\(name)' is not one (letters, digits and '_', not starting with a digit)"
                    )
                    continue
                }
                file.secrets.append((name, reader.location(node)))
            }
        }
        return file
    }

    var diagnostics: [Diagnostic] { reader.diagnostics }

    /// The problems found, at most ``DiagnosticList/perFile`` of them listed.
    var problems: DiagnosticList { reader.problems }

    static func diagnostic(for error: YamlError, file: String) -> Diagnostic {
        switch error {
        case .reader(let problem, let offset, _, let yaml):
            // libyaml names the byte offset of a character YAML does not allow (NUL, ESC, ...);
            // the place is found again here, where the whole text is at hand.
            if let found = TextCheck.firstForbiddenCharacter(in: yaml) {
                return Diagnostic(
                    at: SourceLocation(file: file, line: found.line, column: found.column),
                    "the control character \(VisibleText.escaped(String(found.scalar))) is not allowed in a job file; remove it (write it as an escape in a double-quoted string if a value needs it)"
                )
            }
            let place = offset.map { TextCheck.location(ofCharacter: $0, in: yaml) } ?? (line: 1, column: 1)
            return Diagnostic(
                at: SourceLocation(file: file, line: place.line, column: place.column),
                "invalid YAML: \(problem)")
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let place = context.map { " \($0.text)" } ?? ""
            let at = SourceLocation(file: file, line: mark.line, column: mark.column)
            if problem.hasPrefix("Maximum nesting level reached") {
                return Diagnostic(
                    at: at,
                    "values are nested more than \(AliasBudget.maxDepth) levels deep; flatten this file")
            }
            return Diagnostic(at: at, "invalid YAML: \(problem)\(place)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            // Yams stops at the first map with a repeated key; it names the first occurrence.
            let keys = duplicates.map { "'\($0)'" }.joined(separator: ", ")
            return Diagnostic(
                at: SourceLocation(file: file, line: context.mark.line, column: context.mark.column),
                "duplicate key \(keys) in one map: each key (and each job id) may appear only once; rename or remove the repeat"
            )
        default:
            return Diagnostic(at: SourceLocation(file: file, line: 1, column: 1), "invalid YAML: \(error)")
        }
    }

    private mutating func parsePipelines(_ node: Node) -> [PipelineDefinition] {
        guard let entries = reader.entries(node, what: "pipelines") else { return [] }
        var result: [PipelineDefinition] = []
        for entry in entries {
            if let problem = Self.nameProblem(entry.key, what: "pipeline name") {
                reader.error(entry.keyNode, problem)
                continue
            }
            var pipeline = PipelineDefinition(name: entry.key, location: reader.location(entry.keyNode))
            if !NodeReader.isNull(entry.value),
                let fields = reader.entries(entry.value, what: "pipeline '\(entry.key)'")
            {
                let known = reader.known(fields, allowed: JobFileKeys.pipeline, in: "pipeline '\(entry.key)'")
                if let node = known["maxConcurrent"]?.value,
                    let value = reader.int(node, what: "maxConcurrent", range: 0...1_000_000)
                {
                    pipeline.maxConcurrent = value
                }
                if let node = known["order"]?.value,
                    let value = reader.choice(node, what: "order", as: PipelineOrder.self)
                {
                    pipeline.order = value
                }
                if let node = known["requiresInternet"]?.value,
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
        guard let entries = reader.entries(node, what: "constraints") else { return [] }
        var result: [(definition: ConstraintDefinition, location: SourceLocation)] = []
        for entry in entries {
            if let problem = Self.nameProblem(entry.key, what: "constraint name") {
                reader.error(entry.keyNode, problem)
                continue
            }
            let what = "constraint '\(entry.key)'"
            var definition = ConstraintDefinition(
                name: entry.key, check: "", satisfy: "", workingDirectory: directory)
            if let fields = reader.entries(entry.value, what: what) {
                let known = reader.known(fields, allowed: JobFileKeys.constraint, in: what)
                for key in ["check", "satisfy"] {
                    guard let value = known[key]?.value else {
                        reader.error(entry.keyNode, "\(what) needs a '\(key)' command")
                        continue
                    }
                    let command = reader.nonEmptyString(value, what: "\(key) of \(what)") ?? ""
                    if key == "check" { definition.check = command } else { definition.satisfy = command }
                }
                if let value = known["timeout"]?.value,
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
        guard let entries = reader.entries(node, what: "connectivity") else { return nil }
        let known = reader.known(entries, allowed: JobFileKeys.connectivity, in: "connectivity")
        var settings = ConnectivitySettings(workingDirectory: directory)
        if let probe = known["probe"]?.value {
            settings.probe = reader.nonEmptyString(probe, what: "connectivity.probe")
        }
        if let node = known["interval"]?.value,
            let interval = reader.duration(node, what: "connectivity.interval", allowZero: false)
        {
            settings.interval = interval
        }
        return settings
    }
}
