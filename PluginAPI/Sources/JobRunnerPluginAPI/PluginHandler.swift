/// A handler of a plugin: an ordinary Swift type whose `run` does one attempt of a job.
///
/// ```swift
/// struct Greet: PluginHandler {
///     struct Parameters: Decodable, Sendable { var name: String }
///     static let name = "greet"
///
///     func run(_ context: HandlerContext<Parameters>) async throws -> HandlerResult {
///         context.log("hello, \(context.parameters.name)")
///         return .succeeded(outputs: ["greeted": context.parameters.name])
///     }
/// }
/// ```
///
/// A thrown error fails the attempt with the error's description as the reason; the job's retry
/// policy decides what comes next. `run` may be called for several jobs at once.
public protocol PluginHandler: Sendable {
    /// The job's `with:` map, decoded. `validate` and `run` check it before anything runs, so a
    /// job whose parameters do not decode never starts. Leave it out when there are none.
    associatedtype Parameters: Decodable & Sendable = NoParameters

    /// The handler's name: jobs call it as `plugin: <plugin>.<name>`.
    static var name: String { get }

    init()

    /// Does one attempt.
    func run(_ context: HandlerContext<Parameters>) async throws -> HandlerResult
}

/// The parameters of a handler that takes none: any `with:` map is accepted and ignored.
public struct NoParameters: Decodable, Sendable {
    public init() {}
    public init(from decoder: any Decoder) throws {}
}
