/// The JSON response of the plugin ABI: the plugin encodes it, the host decodes it, both with
/// this type's `Codable`.
public struct PluginResponse: Codable, Sendable, Equatable {
    /// How an attempt ended, as the ABI spells it.
    public enum Status: String, Codable, Sendable {
        /// Done.
        case succeeded
        /// Failed: the retry policy decides whether another attempt comes.
        case failed
        /// Failed, asking to be tried again, whatever `retry.on` says.
        case retry
        /// Nothing to do: the job is `skipped`.
        case skipped
    }

    /// How the attempt ended.
    public var status: Status
    /// Why it failed, was skipped or asks to be retried.
    public var message: String?
    /// Seconds; with `retry`, replaces the backoff.
    public var retryAfter: Double?
    /// The job's outputs, for the jobs that need it.
    public var outputs: [String: String]?

    /// A response with every member given.
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
