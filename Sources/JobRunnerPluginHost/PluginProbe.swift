/// Loading a plugin library somewhere else first: a library that crashes whoever loads it
/// (a constructor that aborts, a descriptor pointer to nowhere, a symbol that is data) must
/// cost a validation error, not the runner. `jobrunner plugin-describe` is the child side.
///
/// A prober loads the library `path` as plugin `name` in a child process, reads its
/// descriptor, answers `checks` there, and returns the description and one verdict per check
/// (nil: the parameters suit the handler), or why the library cannot be used, a crash or a
/// time-out of the child included.
public typealias PluginProber =
    @Sendable (_ name: String, _ path: String, _ checks: [PluginParameterCheck]) -> Result<
        PluginProbeAnswer, PluginLoadError
    >

/// One `check_parameters` question: may `handler` run with `parameters` (the JSON of a job's
/// `with:` map)?
public struct PluginParameterCheck: Sendable, Hashable, Codable {
    public var handler: String
    public var parameters: String

    public init(handler: String, parameters: String) {
        self.handler = handler
        self.parameters = parameters
    }
}

/// What a child that loaded a library answers: the description, and one verdict per check
/// asked (nil: acceptable; else the plugin's message).
public struct PluginProbeAnswer: Sendable, Hashable, Codable {
    public var plugin: PluginDescription
    public var verdicts: [String?]

    public init(plugin: PluginDescription, verdicts: [String?]) {
        self.plugin = plugin
        self.verdicts = verdicts
    }
}

/// What `jobrunner plugin-describe` writes on standard output: exactly one of the two.
public struct PluginProbeReply: Sendable, Equatable, Codable {
    public var answer: PluginProbeAnswer?
    public var refusal: PluginLoadError?

    public init(answer: PluginProbeAnswer? = nil, refusal: PluginLoadError? = nil) {
        self.answer = answer
        self.refusal = refusal
    }

    /// The child side: loads plugin `name` from `path` in this process and answers `checks`.
    public static func probe(name: String, path: String, checks: [PluginParameterCheck]) -> PluginProbeReply {
        switch PluginCatalog.open(name: name, path: path) {
        case .failure(let error):
            return PluginProbeReply(refusal: error)
        case .success(let loaded):
            let verdicts = checks.map { check in
                loaded.check(handler: check.handler, parameters: Array(check.parameters.utf8))
            }
            return PluginProbeReply(answer: PluginProbeAnswer(plugin: loaded.info, verdicts: verdicts))
        }
    }
}
