import Foundation
import JobRunnerCore

/// A problem with a plugin job, found before anything runs.
public struct PluginProblem: Sendable, Hashable {
    public var location: SourceLocation
    public var message: String

    public init(location: SourceLocation, message: String) {
        self.location = location
        self.message = message
    }
}

extension PluginCatalog {
    /// Loads the plugin of every plugin job and checks its handler and `with:` parameters;
    /// returns every problem, each at the line it concerns.
    public func problems(in workload: Workload) -> [PluginProblem] {
        var problems: [PluginProblem] = []
        // Jobs that share a handler and parameters (thousands of `noop.ok`, say) are checked once.
        var verdicts: [ParameterCheck: String?] = [:]
        for job in workload.jobs {
            guard case .plugin(let name, let handler) = job.handler else { continue }
            let at = job.pluginLocations?.plugin ?? job.location
            switch plugin(name) {
            case .failure(let error):
                problems.append(PluginProblem(location: at, message: "job '\(job.id)': \(error)"))
            case .success(let plugin):
                guard plugin.handlers.contains(handler) else {
                    let offered = plugin.handlers.map { "\(name).\($0)" }.joined(separator: ", ")
                    let hint =
                        Suggestion.closest(to: handler, in: plugin.handlers).map {
                            "; did you mean '\(name).\($0)'?"
                        } ?? ""
                    problems.append(
                        PluginProblem(
                            location: at,
                            message: "job '\(job.id)': plugin '\(name)' has no handler '\(handler)' "
                                + "(it offers \(offered.isEmpty ? "none" : offered))\(hint)"))
                    continue
                }
                var parameters = JSONWriter()
                parameters.value(.object(job.parameters))
                let key = ParameterCheck(plugin: name, handler: handler, parameters: parameters.bytes)
                let verdict = verdicts[key] ?? plugin.check(handler: handler, parameters: parameters.bytes)
                verdicts[key] = verdict
                if let message = verdict {
                    problems.append(
                        PluginProblem(
                            location: job.pluginLocations?.parameters ?? at,
                            message: "job '\(job.id)': with: does not suit \(name).\(handler): \(message)"))
                }
            }
        }
        return problems
    }
}

/// One `check_parameters` question, to ask the plugin once.
private struct ParameterCheck: Hashable {
    let plugin: String
    let handler: String
    let parameters: [UInt8]

    func hash(into hasher: inout Hasher) {
        hasher.combine(plugin)
        hasher.combine(handler)
        parameters.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
