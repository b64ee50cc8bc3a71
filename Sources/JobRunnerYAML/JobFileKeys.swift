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
protocol FileKey: RawRepresentable, Sendable where RawValue == Int {
    /// The keys as written, in the order of the cases (at most 64 of them).
    static var names: [String] { get }
    /// The cases by name.
    static var byName: KeyTable<Self> { get }
}

extension FileKey {
    static func table() -> KeyTable<Self> { KeyTable(names) }
}

/// The cases of a ``FileKey`` by name. A key is looked up once per key of every map of a file
/// (a million times in a large one): among the few names of its length, by their bytes, rather
/// than by a hash of its text.
struct KeyTable<Key: FileKey>: Sendable {
    /// The names of each length in bytes, with their cases.
    private var byLength: [[(name: String, key: Key)]] = []

    init(_ names: [String]) {
        for (number, name) in names.enumerated() {
            let length = name.utf8.count
            while byLength.count <= length { byLength.append([]) }
            if let key = Key(rawValue: number) { byLength[length].append((name, key)) }
        }
    }

    subscript(name: String) -> Key? {
        let length = name.utf8.count
        guard length < byLength.count else { return nil }
        for candidate in byLength[length] where candidate.name == name { return candidate.key }
        return nil
    }
}

/// The entries of one map whose keys are known, by key: the entries present, in the order of
/// their keys' cases, and a bit per case that says which are. A job map has a few of its 23 keys;
/// a table of every key would cost each job an allocation of them all.
struct Known<Key: FileKey> {
    private var present: [Entry] = []
    /// Bit `n` set: the case numbered `n` has an entry.
    private var mask: UInt64 = 0

    /// The position in `present` of the case numbered `number`, set or not.
    private func slot(_ number: Int) -> Int {
        (mask & ((1 << UInt64(number)) - 1)).nonzeroBitCount
    }

    subscript(key: Key) -> Entry? {
        get {
            let bit = UInt64(1) << UInt64(key.rawValue)
            return mask & bit == 0 ? nil : present[slot(key.rawValue)]
        }
        set {
            let bit = UInt64(1) << UInt64(key.rawValue)
            let index = slot(key.rawValue)
            switch (mask & bit != 0, newValue) {
            case (true, .some(let entry)): present[index] = entry
            case (true, nil):
                present.remove(at: index)
                mask &= ~bit
            case (false, .some(let entry)):
                present.insert(entry, at: index)
                mask |= bit
            case (false, nil): break
            }
        }
    }

    /// Whether `key` has an entry.
    func has(_ key: Key) -> Bool {
        mask & (UInt64(1) << UInt64(key.rawValue)) != 0
    }

    /// Whether no key has an entry.
    var isEmpty: Bool { mask == 0 }

    /// These entries over `base`: each key's own entry, else base's.
    func over(_ base: Known<Key>) -> Known<Key> {
        // Most files have no defaults: nothing to copy then.
        if base.mask == 0 { return self }
        if mask == 0 { return base }
        var result = Known()
        result.mask = mask | base.mask
        result.present.reserveCapacity(result.mask.nonzeroBitCount)
        var (own, other) = (0, 0)
        var rest = result.mask
        while rest != 0 {
            let bit = rest & (~rest &+ 1)
            rest &= ~bit
            if mask & bit != 0 {
                result.present.append(present[own])
                own += 1
                if base.mask & bit != 0 { other += 1 }
            } else {
                result.present.append(base.present[other])
                other += 1
            }
        }
        return result
    }
}

enum TopLevelKey: Int, FileKey {
    case version, pipelines, constraints, connectivity, plugins, defaults, jobs, retention, secrets, notify
    static let names = [
        "version", "pipelines", "constraints", "connectivity", "plugins", "defaults", "jobs", "retention",
        "secrets", "notify",
    ]
    static let byName = table()
}

enum JobKey: Int, FileKey {
    case run, plugin, with, env, workdir, pipeline, needs, priority, requiresInternet
    case constraints, timeout, killGrace, retry, every, cron, catchUp, overlap, timezone
    case isolation, enabled, matrix, allowFailure, when, retention
    static let names = [
        "run", "plugin", "with", "env", "workdir", "pipeline", "needs", "priority", "requiresInternet",
        "constraints", "timeout", "killGrace", "retry", "every", "cron", "catchUp", "overlap", "timezone",
        "isolation", "enabled", "matrix", "allowFailure", "when", "retention",
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

enum NotifyKey: Int, FileKey {
    case on, jobs, run, plugin, with, isolation, timeout, retry
    static let names = ["on", "jobs", "run", "plugin", "with", "isolation", "timeout", "retry"]
    static let byName = table()
}

enum RetentionKey: Int, FileKey {
    case runs, age
    static let names = ["runs", "age"]
    static let byName = table()
}
