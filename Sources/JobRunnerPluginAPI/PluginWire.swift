/// The JSON request of the plugin ABI (see `jobrunner_plugin.h`), as jobrunner sends it.
public struct PluginRequest<Parameters> {
    public var handler: String
    public var job: String
    public var run: String
    public var attempt: Int
    public var parameters: Parameters
    public var needs: [String: [String: String]]
    /// The attempt's log file.
    public var log: String?
    public var workdir: String

    public init(
        handler: String, job: String, run: String, attempt: Int, parameters: Parameters,
        needs: [String: [String: String]], log: String?, workdir: String
    ) {
        self.handler = handler
        self.job = job
        self.run = run
        self.attempt = attempt
        self.parameters = parameters
        self.needs = needs
        self.log = log
        self.workdir = workdir
    }
}

extension PluginRequest: Encodable where Parameters: Encodable {}
extension PluginRequest: Decodable where Parameters: Decodable {}
extension PluginRequest: Sendable where Parameters: Sendable {}

/// The JSON response of the plugin ABI.
public struct PluginResponse: Codable, Sendable, Equatable {
    /// How an attempt ended, as the ABI spells it.
    public enum Status: String, Codable, Sendable {
        case succeeded, failed, retry, skipped
    }

    public var status: Status
    public var message: String?
    /// Seconds; with `retry`, replaces the backoff.
    public var retryAfter: Double?
    public var outputs: [String: String]?

    public init(
        status: Status, message: String? = nil, retryAfter: Double? = nil, outputs: [String: String]? = nil
    ) {
        self.status = status
        self.message = message
        self.retryAfter = retryAfter
        self.outputs = outputs
    }

    /// The response for a handler's result.
    public init(_ result: HandlerResult) {
        switch result {
        case .succeeded(let outputs):
            self.init(status: .succeeded, outputs: outputs.isEmpty ? nil : outputs)
        case .failed(let message, let outputs):
            self.init(status: .failed, message: message, outputs: outputs.isEmpty ? nil : outputs)
        case .retry(let after, let message):
            self.init(
                status: .retry, message: message.isEmpty ? nil : message,
                retryAfter: after.map {
                    Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18
                })
        case .skipped(let reason):
            self.init(status: .skipped, message: reason)
        }
    }
}
