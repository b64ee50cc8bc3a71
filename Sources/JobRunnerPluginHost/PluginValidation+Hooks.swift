import JobRunnerCore
import JobRunnerJSON

extension PluginCatalog {
    /// The problems of `notify:` hooks that call a plugin (SPEC 5.13): a plugin that cannot be
    /// loaded, a handler it does not offer, `with:` its handler refuses; each at its line, as
    /// for jobs. Checked in a child process unless the hook runs `isolation: inprocess`.
    func hookProblems(in workload: Workload) -> [PluginProblem] {
        var problems: [PluginProblem] = []
        for hook in workload.notify {
            guard case .plugin(let name, let handler) = hook.command else { continue }
            let who = "notify hook \(VisibleText.quoted(hook.name))"
            let at =
                hook.pluginLocations?.plugin ?? hook.location ?? SourceLocation(file: "", line: 0, column: 0)
            let description: PluginDescription
            switch describe(name) {
            case .failure(let error):
                problems.append(PluginProblem(location: at, message: "\(who): \(error)"))
                continue
            case .success(let found): description = found
            }
            guard description.handlers.contains(handler) else {
                let offered = description.handlers.map { "\(name).\($0)" }.joined(separator: ", ")
                let hint =
                    Suggestion.closest(to: handler, in: description.handlers).map {
                        "; did you mean '\(name).\($0)'?"
                    }
                    ?? ""
                problems.append(
                    PluginProblem(
                        location: at,
                        message:
                            "\(who): plugin \(VisibleText.quoted(name)) has no handler \(VisibleText.quoted(handler)) "
                            + "(it offers \(offered.isEmpty ? "none" : offered))\(hint)"))
                continue
            }
            var parameters = JSONWriter()
            parameters.value(.object(hook.parameters))
            // Checked in a child process whatever the hook's isolation, as jobs' checks are: a
            // check that crashes, hangs or exits costs this process nothing.
            let check = PluginParameterCheck(
                handler: handler, parameters: String(decoding: parameters.bytes, as: UTF8.self))
            let verdict: String?
            switch checkApart(name, [check]).first {
            case .failure(let error)?:
                problems.append(
                    PluginProblem(
                        location: hook.pluginLocations?.parameters ?? at, message: "\(who): \(error)"))
                continue
            case .success(let answer)?: verdict = answer
            case nil: verdict = nil
            }
            guard let verdict else { continue }
            problems += Self.verdictProblems(
                verdict, who: who, at: hook.pluginLocations?.parameters ?? at, plugin: name, handler: handler)
        }
        return problems
    }
}
