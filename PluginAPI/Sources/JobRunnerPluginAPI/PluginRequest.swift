/// The JSON request of the plugin ABI (see `jobrunner_plugin.h`), as jobrunner sends it.
///
/// This one type is the request's schema on both sides: a plugin decodes it with its own
/// `Parameters`, and the host builds it with `JSONValue` parameters before writing its bytes, so
/// the members cannot drift apart (the host's writer is tested against this type's `Codable`).
public struct PluginRequest<Parameters> {
    /// The handler's name, as the job names it after the plugin's (`plugin.handler`).
    public var handler: String
    /// The job's id.
    public var job: String
    /// The run's id.
    public var run: String
    /// The attempt's number, from 1.
    public var attempt: Int
    /// The job's `with:` parameters.
    public var parameters: Parameters
    /// Outputs of the jobs this one needs: job id, then key.
    public var needs: [String: [String: String]]
    /// The attempt's log file.
    public var log: String?
    /// The job's working directory.
    public var workdir: String
    /// For a `notify:` hook's call: the finished run it is about; nil for a job's attempt.
    public var notify: PluginNotification?

    /// A request with every member given.
    public init(
        handler: String, job: String, run: String, attempt: Int, parameters: Parameters,
        needs: [String: [String: String]], log: String?, workdir: String, notify: PluginNotification? = nil
    ) {
        self.handler = handler
        self.job = job
        self.run = run
        self.attempt = attempt
        self.parameters = parameters
        self.needs = needs
        self.log = log
        self.workdir = workdir
        self.notify = notify
    }
}

extension PluginRequest: Encodable where Parameters: Encodable {}
extension PluginRequest: Decodable where Parameters: Decodable {}
extension PluginRequest: Sendable where Parameters: Sendable {}
extension PluginRequest: Equatable where Parameters: Equatable {}
