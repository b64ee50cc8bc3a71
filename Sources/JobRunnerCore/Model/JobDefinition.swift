/// What runs an attempt of a job.
public enum HandlerSpec: Sendable, Hashable {
    /// `run: "…"`: a command line for `/bin/sh -c`.
    case shell(String)
    /// `run: [argv…]`: a program and its arguments, no shell.
    case argv([String])
    /// `plugin: name.handler`: a handler of a loaded plugin.
    case plugin(plugin: String, handler: String)
}

/// Where a plugin job's handler runs (SPEC 6).
public enum Isolation: String, Sendable, Hashable, CaseIterable {
    /// Called directly in the runner's process: fastest; a crash takes the runner down.
    case inprocess
    /// Called in one of a few persistent worker processes of the plugin, one call at a time
    /// each: a crash fails only that attempt (and its worker is replaced).
    case process
    /// Called in a child `jobrunner` process of its own, started for the attempt: nothing a
    /// handler leaves in its process can reach another attempt.
    case processPerAttempt = "process-per-attempt"
}

/// Where the values of a plugin job stand, for errors found when the plugin is loaded.
public struct PluginLocations: Sendable, Hashable {
    /// The `plugin:` value.
    public var plugin: SourceLocation
    /// The `with:` value, when there is one.
    public var parameters: SourceLocation?

    public init(plugin: SourceLocation, parameters: SourceLocation? = nil) {
        self.plugin = plugin
        self.parameters = parameters
    }
}

/// How a pipeline orders the jobs of its files (SPEC 5.3).
public enum PipelineOrder: String, Sendable, Hashable, CaseIterable {
    /// Any ready job may start.
    case flat
    /// The jobs of one file start only after every job of the earlier files is final.
    case sequential
}

/// A named lane with its own concurrency limit (SPEC 5.3).
public struct PipelineDefinition: Sendable, Hashable {
    public static let defaultName = "default"
    public static let defaultMaxConcurrent = 4

    public var name: String
    /// At most this many attempts at once; 0 means unlimited.
    public var maxConcurrent: Int
    public var order: PipelineOrder
    public var requiresInternet: Bool
    public var location: SourceLocation?

    public init(
        name: String,
        maxConcurrent: Int = PipelineDefinition.defaultMaxConcurrent,
        order: PipelineOrder = .flat,
        requiresInternet: Bool = false,
        location: SourceLocation? = nil
    ) {
        self.name = name
        self.maxConcurrent = maxConcurrent
        self.order = order
        self.requiresInternet = requiresInternet
        self.location = location
    }
}

extension PipelineDefinition {
    /// Pipelines by name, the last of a name winning, with `default` added when missing.
    public static func table(_ pipelines: [PipelineDefinition]) -> [String: PipelineDefinition] {
        var table: [String: PipelineDefinition] = [:]
        for pipeline in pipelines { table[pipeline.name] = pipeline }
        if table[defaultName] == nil { table[defaultName] = PipelineDefinition(name: defaultName) }
        return table
    }
}

/// One job as loaded from a job file: everything the runner needs to run it.
///
/// A run holds one per job, so it is kept small (`JobDefinitionLayoutTests` holds it to that): the values
/// most jobs leave as they are (`timeout`, `killGrace`, `retry`, `schedule`, `catchUp`,
/// `overlap`) live in a shared copy-on-write box, one for every job that keeps the defaults, and
/// `pluginLocations` in the job's own file is kept as lines and columns. It is still a value:
/// changing a copy never changes the original.
public struct JobDefinition: Sendable, Hashable {
    /// `killGrace` when a job file says nothing: the 5 s between SIGTERM and SIGKILL that SPEC 3
    /// promises. Constraint commands and connectivity probes, which have no job key, use it too.
    public static let defaultKillGrace = Duration.seconds(5)

    // Stored properties in this order leave the least padding: the one-byte values fill the
    // handler's last word.
    public var id: String
    public var handler: HandlerSpec
    public var requiresInternet: Bool
    public var enabled: Bool
    /// For plugin jobs: where the handler runs.
    public var isolation: Isolation
    /// `allowFailure: true`: a failure is recorded as such but satisfies `needs` and does not
    /// fail the run (SPEC 3).
    public var allowFailure = false
    /// `when:`: whether it runs after its needs succeeded (the default), failed, or always.
    public var when = RunCondition.success
    /// `pluginLocations` when its places are in the job's own file, as they are when loaded.
    private var pluginMarks = PluginMarks.none
    /// `with:` parameters.
    public var parameters: [String: JSONValue]
    public var environment: [String: String]
    /// Absolute working directory.
    public var workingDirectory: String
    public var pipeline: String
    public var needs: [String]
    public var priority: Int
    public var constraints: [String]
    /// Index of the job's file among all loaded files, in load order.
    public var fileIndex: Int
    /// Where the job's id stands in its file.
    public var location: SourceLocation {
        didSet {
            // The compact plugin places name the job's file: moved to the box before it changes.
            guard !pluginMarks.isEmpty, oldValue.file != location.file else { return }
            let kept = pluginMarks.locations(in: oldValue.file)
            pluginMarks = .none
            changeRare { $0.pluginLocations = kept }
        }
    }
    /// The values most jobs leave as they are; shared until one is changed.
    private var rare: RareBox

    public init(
        id: String,
        handler: HandlerSpec,
        parameters: [String: JSONValue] = [:],
        environment: [String: String] = [:],
        workingDirectory: String = ".",
        pipeline: String = PipelineDefinition.defaultName,
        needs: [String] = [],
        priority: Int = 0,
        requiresInternet: Bool = false,
        constraints: [String] = [],
        timeout: Duration? = nil,
        killGrace: Duration = JobDefinition.defaultKillGrace,
        retry: RetryPolicy = RetryPolicy(),
        enabled: Bool = true,
        fileIndex: Int = 0,
        location: SourceLocation = SourceLocation(file: "<memory>", line: 1, column: 1),
        isolation: Isolation = .inprocess,
        pluginLocations: PluginLocations? = nil,
        schedule: Schedule? = nil,
        catchUp: CatchUp = .latest,
        overlap: Overlap = .skip
    ) {
        self.id = id
        self.handler = handler
        self.parameters = parameters
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.pipeline = pipeline
        self.needs = needs
        self.priority = priority
        self.requiresInternet = requiresInternet
        self.constraints = constraints
        self.enabled = enabled
        self.fileIndex = fileIndex
        self.location = location
        self.isolation = isolation
        let values = RareValues(
            timeout: timeout, killGrace: killGrace, retry: retry, schedule: schedule, catchUp: catchUp,
            overlap: overlap)
        rare = values == RareBox.defaults.values ? RareBox.defaults : RareBox(values)
        self.pluginLocations = pluginLocations
    }

    public var timeout: Duration? {
        get { rare.values.timeout }
        set { setRare(\.timeout, newValue) }
    }

    /// How long the job's processes get between SIGTERM and SIGKILL when a timeout, a stop of the
    /// runner or the end of the main process ends them: time to save work and clean up.
    public var killGrace: Duration {
        get { rare.values.killGrace }
        set { setRare(\.killGrace, newValue) }
    }

    public var retry: RetryPolicy {
        get { rare.values.retry }
        set { setRare(\.retry, newValue) }
    }

    /// `every:` or `cron:` (with `timezone:`): when a periodic job fires; nil for a one-shot
    /// job (SPEC 5.8).
    public var schedule: Schedule? {
        get { rare.values.schedule }
        set { setRare(\.schedule, newValue) }
    }

    /// For periodic jobs: what becomes of occurrences missed while no runner was up.
    public var catchUp: CatchUp {
        get { rare.values.catchUp }
        set { setRare(\.catchUp, newValue) }
    }

    /// For periodic jobs: what an occurrence does when it comes due while the last one runs.
    public var overlap: Overlap {
        get { rare.values.overlap }
        set { setRare(\.overlap, newValue) }
    }

    /// For periodic jobs: how many of its occurrences are kept (its own `retention:`, SPEC 5.12);
    /// nil: the file's top-level `retention:`, counted for this job's occurrences alone.
    public var retention: RetentionPolicy? {
        get { rare.values.retention }
        set { setRare(\.retention, newValue) }
    }

    /// For plugin jobs: where `plugin:` and `with:` stand.
    public var pluginLocations: PluginLocations? {
        get {
            pluginMarks.isEmpty ? rare.values.pluginLocations : pluginMarks.locations(in: location.file)
        }
        set {
            if let newValue, let marks = PluginMarks(newValue, file: location.file) {
                pluginMarks = marks
                if rare.values.pluginLocations != nil { changeRare { $0.pluginLocations = nil } }
            } else {
                pluginMarks = .none
                if rare.values.pluginLocations != newValue { changeRare { $0.pluginLocations = newValue } }
            }
        }
    }

    /// Changes the rare values of this job only: the box is copied first when it is shared.
    /// Sets one rare value, copying the shared box first only when the value changes.
    private mutating func setRare<Value: Equatable>(
        _ member: WritableKeyPath<RareValues, Value>, _ value: Value
    ) {
        if rare.values[keyPath: member] != value { changeRare { $0[keyPath: member] = value } }
    }

    private mutating func changeRare(_ change: (inout RareValues) -> Void) {
        if !isKnownUniquelyReferenced(&rare) { rare = RareBox(rare.values) }
        change(&rare.values)
    }

    public static func == (left: JobDefinition, right: JobDefinition) -> Bool {
        left.id == right.id && left.handler == right.handler
            && left.requiresInternet == right.requiresInternet
            && left.enabled == right.enabled && left.isolation == right.isolation
            && left.allowFailure == right.allowFailure && left.when == right.when
            && left.parameters == right.parameters && left.environment == right.environment
            && left.workingDirectory == right.workingDirectory && left.pipeline == right.pipeline
            && left.needs == right.needs && left.priority == right.priority
            && left.constraints == right.constraints && left.fileIndex == right.fileIndex
            && left.location == right.location && left.pluginLocations == right.pluginLocations
            && (left.rare === right.rare || left.rare.values.sameExceptPlaces(as: right.rare.values))
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(handler)
        hasher.combine(requiresInternet)
        hasher.combine(enabled)
        hasher.combine(isolation)
        hasher.combine(allowFailure)
        hasher.combine(when)
        hasher.combine(parameters)
        hasher.combine(environment)
        hasher.combine(workingDirectory)
        hasher.combine(pipeline)
        hasher.combine(needs)
        hasher.combine(priority)
        hasher.combine(constraints)
        hasher.combine(fileIndex)
        hasher.combine(location)
        hasher.combine(pluginLocations)
        hasher.combine(timeout)
        hasher.combine(killGrace)
        hasher.combine(retry)
        hasher.combine(schedule)
        hasher.combine(catchUp)
        hasher.combine(overlap)
        hasher.combine(retention)
    }
}

extension JobDefinition {
    /// The values of ``JobDefinition`` that most jobs leave at their defaults.
    struct RareValues: Hashable {
        var timeout: Duration?
        var killGrace = JobDefinition.defaultKillGrace
        var retry = RetryPolicy()
        var schedule: Schedule?
        var catchUp = CatchUp.latest
        var overlap = Overlap.skip
        var retention: RetentionPolicy?
        /// Plugin places that are not in the job's own file (only made by hand).
        var pluginLocations: PluginLocations?

        func sameExceptPlaces(as other: RareValues) -> Bool {
            timeout == other.timeout && killGrace == other.killGrace && retry == other.retry
                && schedule == other.schedule && catchUp == other.catchUp && overlap == other.overlap
                && retention == other.retention
        }
    }

    /// The box the rare values live in: never changed while more than one job holds it.
    final class RareBox: @unchecked Sendable {
        /// The box of every job that keeps all the defaults.
        static let defaults = RareBox(RareValues())

        var values: RareValues

        init(_ values: RareValues) { self.values = values }
    }

    /// Where `plugin:` and `with:` stand, as lines and columns in the job's own file; a line of
    /// 0 is no place.
    struct PluginMarks: Hashable {
        static let none = PluginMarks(pluginLine: 0, pluginColumn: 0, parametersLine: 0, parametersColumn: 0)

        var pluginLine: UInt32
        var pluginColumn: UInt32
        var parametersLine: UInt32
        var parametersColumn: UInt32

        var isEmpty: Bool { pluginLine == 0 }

        init(pluginLine: UInt32, pluginColumn: UInt32, parametersLine: UInt32, parametersColumn: UInt32) {
            self.pluginLine = pluginLine
            self.pluginColumn = pluginColumn
            self.parametersLine = parametersLine
            self.parametersColumn = parametersColumn
        }

        /// The marks of `locations`, or nil when a place is in another file or outside the lines
        /// and columns they can hold.
        init?(_ locations: PluginLocations, file: String) {
            func mark(_ location: SourceLocation) -> (UInt32, UInt32)? {
                guard location.file == file, let line = UInt32(exactly: location.line), line > 0,
                    let column = UInt32(exactly: location.column)
                else { return nil }
                return (line, column)
            }
            guard let plugin = mark(locations.plugin) else { return nil }
            var parameters: (UInt32, UInt32) = (0, 0)
            if let place = locations.parameters {
                guard let found = mark(place) else { return nil }
                parameters = found
            }
            self.init(
                pluginLine: plugin.0, pluginColumn: plugin.1, parametersLine: parameters.0,
                parametersColumn: parameters.1)
        }

        func locations(in file: String) -> PluginLocations {
            PluginLocations(
                plugin: SourceLocation(file: file, line: Int(pluginLine), column: Int(pluginColumn)),
                parameters: parametersLine == 0
                    ? nil
                    : SourceLocation(file: file, line: Int(parametersLine), column: Int(parametersColumn)))
        }
    }
}

extension JobDefinition {
    /// Whether the job runs on a schedule (`every:` or `cron:`) rather than once per run.
    public var isPeriodic: Bool { schedule != nil }

    /// Whether its handler runs inside the runner's process: an in-process plugin call.
    public var runsInRunner: Bool {
        if case .plugin = handler { isolation == .inprocess } else { false }
    }
}
