import Foundation
import JobRunnerCore

extension JobFileParser {
    /// Parses one entry under `jobs:`, with the file's `defaults:` beneath it.
    /// `retry:` and `env:` merge key by key with the defaults; other keys replace them.
    /// Adds the job, or the jobs of its `matrix:`, with `env:` and `with:` expanded, to `file`.
    mutating func parseJob(_ entry: Entry, defaults: Known<JobKey>, into file: inout ParsedFile) {
        let id = entry.key
        let location = reader.location(entry.keyNode)
        if let problem = Self.nameProblem(id, what: "job id") {
            reader.error(entry.keyNode, problem)
        }
        guard let fields = reader.entries(entry.value, what: "job \(VisibleText.quoted(id))") else { return }
        let own = reader.known(fields, as: JobKey.self, in: "job \(VisibleText.quoted(id))")
        let keys = own.over(defaults)

        var handler: HandlerSpec?
        var pluginLocations: PluginLocations?
        switch (keys[.run], keys[.plugin]) {
        case (nil, nil):
            reader.error(
                entry.keyNode,
                "job \(VisibleText.quoted(id)) needs either 'run' (a command) or 'plugin' (name.handler)")
        case (.some, .some(let plugin)):
            reader.error(
                plugin.keyNode, "job \(VisibleText.quoted(id)) has both 'run' and 'plugin'; keep one of them")
        case (.some(let run), nil):
            handler = parseRun(run.value)
        case (nil, .some(let plugin)):
            if let text = reader.nonEmptyString(plugin.value, what: "plugin") {
                if let parts = Self.pluginPair(text), Self.isValidName(parts.plugin),
                    Self.isValidName(parts.handler)
                {
                    handler = .plugin(plugin: parts.plugin, handler: parts.handler)
                    pluginLocations = PluginLocations(plugin: reader.location(plugin.value))
                } else {
                    reader.error(
                        plugin.value,
                        "plugin must be written as <plugin>.<handler>, like users.refresh, not \(VisibleText.quoted(text))"
                    )
                }
            }
        }

        var job = JobDefinition(
            id: id, handler: handler ?? .shell(""), workingDirectory: directory, fileIndex: fileIndex,
            location: location)
        var needMarks = Marks()
        var constraintMarks: [Mark] = []
        var pipelineMark = reader.mark(entry.keyNode)

        var raw = RawValues()
        if let node = keys[.with]?.value {
            if reader.tree.kind(node) == .mapping, case .object(let object) = reader.json(node) {
                job.parameters = object
                raw.with = node
                pluginLocations?.parameters = reader.location(node)
            } else if !reader.isNull(node) {
                reader.error(node, "with must be a map of parameter names to values")
            }
            if keys[.run] != nil { checkParameterNames(node) }
        }
        // The file's defaults first, then the job's own; most jobs have neither. A variable the
        // job sets again moves to the end, in one pass however many there are.
        var ordered: [(key: String, value: String, node: Node)?] = []
        var positions: [String: Int] = [:]
        for source in defaults.has(.env) || own.has(.env) ? [defaults[.env], own[.env]] : [] {
            guard let source, let entries = reader.entries(source.value, what: "env") else { continue }
            for variable in entries {
                guard let value = reader.tree.text(variable.value), !reader.isNull(variable.value) else {
                    reader.error(
                        variable.value, "env value of \(VisibleText.quoted(variable.key)) must be a string")
                    continue
                }
                guard !variable.key.isEmpty, !variable.key.utf8.contains(UInt8(ascii: "=")) else {
                    reader.error(
                        variable.value,
                        "env name \(VisibleText.quoted(variable.key)) cannot be passed to a process: a variable's name must be non-empty and hold no '='"
                    )
                    continue
                }
                job.environment[variable.key] = value
                if let earlier = positions[variable.key] { ordered[earlier] = nil }
                positions[variable.key] = ordered.count
                ordered.append((variable.key, value, variable.value))
            }
        }
        if !ordered.isEmpty { raw.environment = ordered.compactMap { $0 } }
        if let node = keys[.workdir]?.value, let path = reader.nonEmptyString(node, what: "workdir") {
            job.workingDirectory = path.hasPrefix("/") ? path : directory + "/" + path
        }
        if let entry = keys[.pipeline] {
            pipelineMark = reader.mark(entry.value)
            if let name = reader.nonEmptyString(entry.value, what: "pipeline") { job.pipeline = name }
        }
        if let node = keys[.needs]?.value, !reader.isNull(node),
            let needs = reader.stringList(node, what: "needs")
        {
            job.needs.reserveCapacity(needs.count)
            // A few needs (most jobs have one) are compared in place; many go through a set.
            var seen: Set<String>? = needs.count > 8 ? [] : nil
            for (need, needNode) in needs {
                if seen != nil {
                    guard seen?.insert(need).inserted == true else { continue }
                } else if job.needs.contains(need) {
                    continue
                }
                job.needs.append(need)
                needMarks.append(reader.mark(needNode))
            }
        }
        if let node = keys[.priority]?.value, let value = reader.int(node, what: "priority") {
            job.priority = value
        }
        if let node = keys[.requiresInternet]?.value, let value = reader.bool(node, what: "requiresInternet")
        {
            job.requiresInternet = value
        }
        if let node = keys[.constraints]?.value, !reader.isNull(node),
            let names = reader.stringList(node, what: "constraints")
        {
            for (name, nameNode) in names {
                job.constraints.append(name)
                constraintMarks.append(reader.mark(nameNode))
            }
        }
        if let node = keys[.timeout]?.value {
            job.timeout = reader.duration(node, what: "timeout", allowZero: false)
        }
        // Zero is allowed: SIGKILL straight after SIGTERM, for jobs with nothing to clean up.
        if let node = keys[.killGrace]?.value, let value = reader.duration(node, what: "killGrace") {
            job.killGrace = value
        }
        job.retry = parseRetry(defaults: defaults[.retry], job: own[.retry])
        let scheduleLocation = parseSchedule(of: &job, keys: keys, own: own)
        if let node = keys[.isolation]?.value,
            let isolation = reader.choice(node, what: "isolation", as: Isolation.self)
        {
            job.isolation = isolation
        }
        // Only the job's own key: a file's defaults may hold it for its plugin jobs.
        if let isolation = own[.isolation], keys[.run] != nil, keys[.plugin] == nil {
            reader.warning(
                isolation.keyNode,
                "isolation applies to plugin jobs only; job \(VisibleText.quoted(id)) runs a command, which always runs in a process of its own, so it has no effect"
            )
        }
        if let node = keys[.enabled]?.value, let value = reader.bool(node, what: "enabled") {
            job.enabled = value
        }
        if let node = keys[.allowFailure]?.value, let value = reader.bool(node, what: "allowFailure") {
            job.allowFailure = value
        }
        if let node = keys[.when]?.value,
            let value = reader.choice(node, what: "when", as: RunCondition.self)
        {
            job.when = value
            // An occurrence's needs are judged before it starts: only success is judged there.
            if value != .success && job.schedule != nil {
                reader.error(
                    node,
                    "when: \(value.rawValue) applies to one-shot jobs; job \(VisibleText.quoted(id)) is periodic (every/cron), and its occurrences run only when their needs succeeded. To be told when an occurrence fails, add a top-level notify: hook (on: [failure], jobs: [\(id)])"
                )
            }
        }
        job.pluginLocations = pluginLocations
        let parsed = ParsedJob(
            definition: job, needMarks: needMarks, pipelineMark: pipelineMark,
            constraintMarks: constraintMarks, scheduleLocation: scheduleLocation)
        expand(parsed, raw: raw, matrix: keys[.matrix], into: &file)
    }

    /// `plugin:`'s value split at its first dot, as `split(separator: ".", maxSplits: 1)` does;
    /// without splitting into characters when the value is ASCII, as it is when valid.
    static func pluginParts(_ text: String) -> [String] {
        if let (plugin, handler) = asciiPluginPair(text) { return [plugin, handler] }
        return text.split(separator: ".", maxSplits: 1).map(String.init)
    }

    /// The two parts of ``pluginParts(_:)`` when there are two, without a list of them.
    static func pluginPair(_ text: String) -> (plugin: String, handler: String)? {
        if let pair = asciiPluginPair(text) { return pair }
        let parts = text.split(separator: ".", maxSplits: 1)
        return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
    }

    /// An ASCII value with a dot that is neither its first nor its last byte, split there.
    private static func asciiPluginPair(_ text: String) -> (String, String)? {
        var text = text
        return text.withUTF8 { bytes in
            guard bytes.allSatisfy({ $0 < 0x80 }), let dot = bytes.firstIndex(of: UInt8(ascii: ".")),
                dot != 0, dot != bytes.count - 1
            else { return nil }
            return (
                String(decoding: UnsafeBufferPointer(rebasing: bytes[..<dot]), as: UTF8.self),
                String(decoding: UnsafeBufferPointer(rebasing: bytes[(dot + 1)...]), as: UTF8.self)
            )
        }
    }

    /// A shell job sees each `with:` key as `JOBRUNNER_PARAM_<KEY>`; two keys that give one name
    /// (`a-b`, `a_b`) would have one silently hide the other.
    private mutating func checkParameterNames(_ node: Node) {
        var seen: [String: String] = [:]
        for (keyNode, _) in reader.tree.pairs(node) {
            guard let key = reader.tree.text(keyNode) else { continue }
            let name = "JOBRUNNER_PARAM_" + EnvironmentName.of(key)
            guard let first = seen[name] else {
                seen[name] = key
                continue
            }
            if first != key {
                reader.error(
                    keyNode,
                    "with: keys \(VisibleText.quoted(first)) and \(VisibleText.quoted(key)) both become the variable \(name) of this shell job; rename one of them"
                )
            }
        }
    }

    mutating func parseRun(_ node: Node) -> HandlerSpec? {
        switch reader.tree.kind(node) {
        case .sequence:
            var argv: [String] = []
            for item in reader.tree.items(node) {
                guard let text = reader.string(item, what: "each item of run") else { return nil }
                argv.append(text)
            }
            guard let first = argv.first, !first.isEmpty else {
                reader.error(node, "run as a list needs a program as its first item, like [swift, build]")
                return nil
            }
            return .argv(argv)
        default:
            return reader.nonEmptyString(node, what: "run").map(HandlerSpec.shell)
        }
    }

    private mutating func parseRetry(defaults: Entry?, job: Entry?) -> RetryPolicy {
        var policy = RetryPolicy()
        guard defaults != nil || job != nil else { return policy }
        var merged = Known<RetryKey>()
        for source in [defaults, job] {
            guard let source, let entries = reader.entries(source.value, what: "retry") else { continue }
            merged = reader.known(entries, as: RetryKey.self, in: "retry").over(merged)
        }
        if let node = merged[.attempts]?.value {
            if reader.tree.text(node) == "unlimited" {
                policy.attempts = nil
            } else if let value = reader.int(
                node, what: "retry.attempts (a number or 'unlimited')", range: 1...1_000_000)
            {
                policy.attempts = value
            }
        }
        if let node = merged[.backoff]?.value,
            let value = reader.choice(node, what: "retry.backoff", as: RetryPolicy.Backoff.self)
        {
            policy.backoff = value
        }
        if let node = merged[.delay]?.value, let value = reader.duration(node, what: "retry.delay") {
            policy.delay = value
        }
        if let node = merged[.factor]?.value, let value = reader.number(node, what: "retry.factor") {
            if value >= 1 && value <= 1000 {
                policy.factor = value
            } else {
                reader.error(node, "retry.factor must be between 1 and 1000, not \(value)")
            }
        }
        if let node = merged[.maxDelay]?.value, let value = reader.duration(node, what: "retry.maxDelay") {
            policy.maxDelay = value
        }
        if let node = merged[.jitter]?.value, let value = reader.number(node, what: "retry.jitter") {
            if (0...1).contains(value) {
                policy.jitter = value
            } else {
                reader.error(node, "retry.jitter must be between 0 and 1, not \(value)")
            }
        }
        if let node = merged[.on]?.value {
            if reader.tree.kind(node) == .sequence {
                var codes = Set<Int32>()
                for item in reader.tree.items(node) {
                    if let code = reader.int(item, what: "each exit code of retry.on", range: 1...255) {
                        codes.insert(Int32(code))
                    }
                }
                policy.retryOn = codes
            } else {
                reader.error(node, "retry.on must be a list of exit codes, like [1, 75]")
            }
        }
        if let node = merged[.maxElapsed]?.value,
            let value = reader.duration(node, what: "retry.maxElapsed", allowZero: false)
        {
            policy.maxElapsed = value
        }
        return policy
    }
}
