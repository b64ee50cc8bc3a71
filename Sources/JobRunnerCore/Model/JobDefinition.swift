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
public struct JobDefinition: Sendable, Hashable {
    /// `killGrace` when a job file says nothing: the 5 s between SIGTERM and SIGKILL that SPEC 3
    /// promises. Constraint commands and connectivity probes, which have no job key, use it too.
    public static let defaultKillGrace = Duration.seconds(5)

    public var id: String
    public var handler: HandlerSpec
    /// `with:` parameters.
    public var parameters: [String: JSONValue]
    public var environment: [String: String]
    /// Absolute working directory.
    public var workingDirectory: String
    public var pipeline: String
    public var needs: [String]
    public var priority: Int
    public var requiresInternet: Bool
    public var constraints: [String]
    public var timeout: Duration?
    /// How long the job's processes get between SIGTERM and SIGKILL when a timeout, a stop of the
    /// runner or the end of the main process ends them: time to save work and clean up.
    public var killGrace: Duration
    public var retry: RetryPolicy
    public var enabled: Bool
    /// Index of the job's file among all loaded files, in load order.
    public var fileIndex: Int
    /// Where the job's id stands in its file.
    public var location: SourceLocation
    /// For plugin jobs: where the handler runs.
    public var isolation: Isolation
    /// For plugin jobs: where `plugin:` and `with:` stand.
    public var pluginLocations: PluginLocations?
    /// `every:` or `cron:` (with `timezone:`): when a periodic job fires; nil for a one-shot
    /// job (SPEC 5.8).
    public var schedule: Schedule?
    /// For periodic jobs: what becomes of occurrences missed while no runner was up.
    public var catchUp: CatchUp
    /// For periodic jobs: what an occurrence does when it comes due while the last one runs.
    public var overlap: Overlap
    /// `allowFailure: true`: a failure is recorded as such but satisfies `needs` and does not
    /// fail the run (SPEC 3).
    public var allowFailure = false
    /// `when:`: whether it runs after its needs succeeded (the default), failed, or always.
    public var when = RunCondition.success

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
        self.timeout = timeout
        self.killGrace = killGrace
        self.retry = retry
        self.enabled = enabled
        self.fileIndex = fileIndex
        self.location = location
        self.isolation = isolation
        self.pluginLocations = pluginLocations
        self.schedule = schedule
        self.catchUp = catchUp
        self.overlap = overlap
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
