import Foundation
import JobRunnerCore
import JobRunnerJSON

/// A problem with a plugin job, found before anything runs.
public struct PluginProblem: Sendable, Hashable {
    public var location: SourceLocation
    public var message: String
    /// The key of `with:` the problem is about, when the plugin named one (`unknown parameter
    /// 'KEY'`): its line is a better place than the map's, which ``location`` is.
    public var parameter: String?

    public init(location: SourceLocation, message: String, parameter: String? = nil) {
        self.location = location
        self.message = message
        self.parameter = parameter
    }
}

extension PluginCatalog {
    /// Describes the plugin of every plugin job and checks its handler and `with:` parameters;
    /// returns every problem, each at the line it concerns.
    ///
    /// The parameters are checked where a crash costs nothing: with a prober, in a child process
    /// (one per plugin, given the prober's time limit), whatever the job's isolation. A check
    /// that crashes, hangs or exits is a problem at each job it concerns, not the end of this
    /// process: an `inprocess` job's plugin is loaded here only to run its calls.
    public func problems(in workload: Workload) -> [PluginProblem] {
        var problems: [PluginProblem] = []
        // The checks, per plugin, asked at the end in one child each.
        var apart: [String: [(check: PluginParameterCheck, job: JobDefinition)]] = [:]
        // The job before, when it was a plugin job with a known handler: most jobs of a large
        // file are like the one before them, and take its plugin and check as they are.
        var previous: Previous?
        for index in workload.jobs.indices {
            guard case .plugin(let name, let handler) = workload.jobs[index].handler else { continue }
            if let same = previous, same.plugin == name, same.check.handler == handler,
                same.parameters == workload.jobs[index].parameters
            {
                apart[name, default: []].append((same.check, workload.jobs[index]))
                continue
            }
            previous = nil
            let job = workload.jobs[index]
            let at = job.pluginLocations?.plugin ?? job.location
            let description: PluginDescription
            switch describe(name) {
            case .failure(let error):
                problems.append(
                    PluginProblem(location: at, message: "job \(VisibleText.quoted(job.id)): \(error)"))
                continue
            case .success(let found): description = found
            }
            guard description.handlers.contains(handler) else {
                problems.append(
                    PluginProblem(location: at, message: Self.unknown(handler, of: description, job: job)))
                continue
            }
            var parameters = JSONWriter()
            parameters.value(.object(job.parameters))
            let check = PluginParameterCheck(
                handler: handler, parameters: String(decoding: parameters.bytes, as: UTF8.self))
            apart[name, default: []].append((check, job))
            previous = Previous(plugin: name, check: check, parameters: job.parameters)
        }
        for (name, asked) in apart.sorted(by: { $0.key < $1.key }) {
            var unique: [PluginParameterCheck] = []
            var seen = Set<PluginParameterCheck>()
            for (check, _) in asked where seen.insert(check).inserted { unique.append(check) }
            let answers = checkApart(name, unique)
            let byCheck = Dictionary(zip(unique, answers), uniquingKeysWith: { first, _ in first })
            for (check, job) in asked {
                guard case .plugin(_, let handler) = job.handler, let answer = byCheck[check] else {
                    continue
                }
                switch answer {
                case .success(nil): continue
                case .success(let verdict?): problems += Self.unsuitable(job, name, handler, verdict)
                case .failure(let error):
                    problems.append(
                        PluginProblem(
                            location: job.pluginLocations?.parameters ?? job.pluginLocations?.plugin
                                ?? job.location,
                            message: "job \(VisibleText.quoted(job.id)): \(error)"))
                }
            }
        }
        return problems + hookProblems(in: workload)
    }

    private static func unknown(_ handler: String, of plugin: PluginDescription, job: JobDefinition) -> String
    {
        let name = plugin.name
        let offered = plugin.handlers.map { "\(name).\($0)" }.joined(separator: ", ")
        let hint =
            Suggestion.closest(to: handler, in: plugin.handlers).map { "; did you mean '\(name).\($0)'?" }
            ?? ""
        return
            "job \(VisibleText.quoted(job.id)): plugin \(VisibleText.quoted(name)) has no handler \(VisibleText.quoted(handler)) "
            + "(it offers \(offered.isEmpty ? "none" : offered))\(hint)"
    }

    private static func unsuitable(_ job: JobDefinition, _ name: String, _ handler: String, _ message: String)
        -> [PluginProblem]
    {
        verdictProblems(
            message, who: "job \(VisibleText.quoted(job.id))",
            at: job.pluginLocations?.parameters ?? job.pluginLocations?.plugin ?? job.location, plugin: name,
            handler: handler)
    }

    /// A problem per line of a plugin's answer about `with:`; a line about one key (`unknown
    /// parameter 'KEY'`, the convention of `jobrunner_plugin.h`) names it.
    static func verdictProblems(
        _ verdict: String, who: String, at: SourceLocation, plugin: String, handler: String
    ) -> [PluginProblem] {
        let lead = "unknown parameter '"
        return verdict.split(separator: "\n", omittingEmptySubsequences: true).map { line in
            var parameter: String?
            if line.hasPrefix(lead), let end = line.dropFirst(lead.count).firstIndex(of: "'") {
                parameter = String(line[line.index(line.startIndex, offsetBy: lead.count)..<end])
            }
            return PluginProblem(
                location: at, message: "\(who): with: does not suit \(plugin).\(handler): \(line)",
                parameter: parameter)
        }
    }
}

/// A plugin job already checked, which the next job takes as it is when it is alike.
private struct Previous {
    let plugin: String
    let check: PluginParameterCheck
    let parameters: [String: JSONValue]
}
