import Foundation
import JobRunnerCore
import JobRunnerPluginHost
import JobRunnerYAML

/// The job files a command was given, loaded and checked, with the plugins their jobs name:
/// what `run`, `validate` and `graph` start from.
struct JobSet {
    /// The workload when nothing was wrong, and every problem found, plugins' included.
    let result: JobFileLoader.Result
    /// The plugins of the jobs, loaded while checking them: `run` calls the same libraries.
    let plugins: PluginCatalog

    /// The checked jobs; nil when any problem is an error.
    var workload: Workload? { result.workload }

    /// Loads the job files among `paths` (default `jobs/`) and the plugins their jobs name, and
    /// prints every problem to standard error, with a count line when any is an error.
    /// - Parameter environment: what `${NAME}` in `env:` and `with:` reads.
    static func load(
        _ paths: [String], environment: [String: String] = ProcessInfo.processInfo.environment
    ) async -> JobSet {
        let jobPaths = self.jobPaths(paths)
        let files = await JobFileLoader.loadConcurrently(paths: jobPaths, environment: environment)
        return checked(files, jobPaths: jobPaths, environment: environment)
    }

    /// ``load(_:environment:)`` on this thread, a large file's jobs one part after another: for
    /// callers that cannot wait (a reload under `serve`).
    /// - Parameter consequence: what the count line says errors mean (a reload changes nothing;
    ///   the jobs loaded before go on).
    static func loadInTurn(
        _ paths: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        consequence: String = "nothing was run"
    ) -> JobSet {
        let jobPaths = self.jobPaths(paths)
        let files = JobFileLoader.load(paths: jobPaths, environment: environment)
        return checked(files, jobPaths: jobPaths, environment: environment, consequence: consequence)
    }

    /// The loaded files with their plugins checked, every problem printed.
    private static func checked(
        _ files: JobFileLoader.Result, jobPaths: [String], environment: [String: String],
        consequence: String = "nothing was run"
    ) -> JobSet {
        // Plugins are checked even when the files have errors, so every problem shows at once.
        let plugins = pluginCatalog(pluginPaths: files.jobsAsRead.pluginPaths, jobPaths: jobPaths)
        let problems = plugins.problems(in: files.jobsAsRead).map { problem in
            // A key of with: the plugin refused is shown at its own line.
            let at = problem.parameter.flatMap { ParameterPlaces.key($0, inMappingAt: problem.location) }
            return Diagnostic(at: at ?? problem.location, problem.message)
        }
        let result = files.adding(problems)
        // A plugin's answer about its parameters may quote a value that holds a secret.
        let masker = SecretMasker(values: files.jobsAsRead.secretValues(environment: environment))
        for diagnostic in result.diagnostics { printError(masker.mask(diagnostic.description)) }
        if result.diagnostics.hasErrors {
            let count = result.diagnostics.filter { $0.severity == .error }.count
            printError("\(count) error\(count == 1 ? "" : "s"); \(consequence)")
        }
        return JobSet(result: result, plugins: plugins)
    }

    /// The paths a command works on: those given, else `jobs/`.
    static func jobPaths(_ paths: [String]) -> [String] {
        paths.isEmpty ? ["jobs"] : paths
    }

    /// Where the plugins of these job files are looked for (SPEC 6).
    /// - Parameters:
    ///   - pluginPaths: `plugins.paths` of the job files, absolute.
    ///   - jobPaths: the files and directories the command was given.
    static func pluginCatalog(pluginPaths: [String], jobPaths: [String]) -> PluginCatalog {
        PluginCatalog(
            searchPath: PluginCatalog.standardSearchPath(pluginPaths: pluginPaths, jobPaths: jobPaths),
            // Every library is loaded in a child process first: one that crashes whoever loads
            // it is a validation error, not the end of this process.
            prober: PluginVetting.prober(
                executable: PluginVetting.executable, timeout: PluginVetting.timeout()))
    }
}
