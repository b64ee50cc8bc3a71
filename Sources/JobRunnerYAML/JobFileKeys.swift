/// Every key the job file schema knows (SPEC 3), including those whose behaviour a later
/// version adds: a misspelt key is an error, never silently ignored.
enum JobFileKeys {
    static let topLevel = TopLevelKey.names
    static let job = JobKey.names
    static let retry = RetryKey.names
    static let pipeline = PipelineKey.names
    static let constraint = ConstraintKey.names
    static let connectivity = ConnectivityKey.names
    static let plugins = PluginsKey.names
    static let retention = RetentionKey.names
}

/// The keys of one kind of map in a job file: a case per key, numbered in the order of
/// ``names``, so that a map's known entries are an array rather than a table of strings.
protocol FileKey: RawRepresentable where RawValue == Int {
    /// The keys as written, in the order of the cases.
    static var names: [String] { get }
    /// The cases by name.
    static var byName: [String: Self] { get }
}

extension FileKey {
    static func table() -> [String: Self] {
        var table: [String: Self] = [:]
        for (number, name) in names.enumerated() { table[name] = Self(rawValue: number) }
        return table
    }
}

/// The entries of one map whose keys are known, by key.
struct Known<Key: FileKey> {
    private var entries = [Entry?](repeating: nil, count: Key.names.count)
    private var isEmpty = true

    subscript(key: Key) -> Entry? {
        get { entries[key.rawValue] }
        set {
            entries[key.rawValue] = newValue
            if newValue != nil { isEmpty = false }
        }
    }

    /// These entries over `base`: each key's own entry, else base's.
    func over(_ base: Known<Key>) -> Known<Key> {
        // Most files have no defaults: nothing to copy then.
        if base.isEmpty { return self }
        var result = self
        result.isEmpty = false
        for index in entries.indices where entries[index] == nil {
            result.entries[index] = base.entries[index]
        }
        return result
    }
}

enum TopLevelKey: Int, FileKey {
    case version, pipelines, constraints, connectivity, plugins, defaults, jobs, retention, secrets
    static let names = [
        "version", "pipelines", "constraints", "connectivity", "plugins", "defaults", "jobs", "retention",
        "secrets",
    ]
    static let byName = table()
}

enum JobKey: Int, FileKey {
    case run, plugin, with, env, workdir, pipeline, needs, priority, requiresInternet
    case constraints, timeout, killGrace, retry, every, cron, catchUp, overlap, timezone
    case isolation, enabled, matrix, allowFailure, when
    static let names = [
        "run", "plugin", "with", "env", "workdir", "pipeline", "needs", "priority", "requiresInternet",
        "constraints", "timeout", "killGrace", "retry", "every", "cron", "catchUp", "overlap", "timezone",
        "isolation", "enabled", "matrix", "allowFailure", "when",
    ]
    static let byName = table()
}

enum RetryKey: Int, FileKey {
    case attempts, backoff, delay, factor, maxDelay, jitter, on, maxElapsed
    static let names = ["attempts", "backoff", "delay", "factor", "maxDelay", "jitter", "on", "maxElapsed"]
    static let byName = table()
}

enum PipelineKey: Int, FileKey {
    case maxConcurrent, order, requiresInternet
    static let names = ["maxConcurrent", "order", "requiresInternet"]
    static let byName = table()
}

enum ConstraintKey: Int, FileKey {
    case check, satisfy, timeout
    static let names = ["check", "satisfy", "timeout"]
    static let byName = table()
}

enum ConnectivityKey: Int, FileKey {
    case probe, interval
    static let names = ["probe", "interval"]
    static let byName = table()
}

enum PluginsKey: Int, FileKey {
    case paths
    static let names = ["paths"]
    static let byName = table()
}

enum RetentionKey: Int, FileKey {
    case runs, age
    static let names = ["runs", "age"]
    static let byName = table()
}
