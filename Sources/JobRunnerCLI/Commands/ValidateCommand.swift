import ArgumentParser
import JobRunnerCore
import JobRunnerPluginHost
import JobRunnerYAML

/// `jobrunner validate [PATH…]`: every check of a run, nothing run.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check job files without running anything.",
        discussion: "Prints every problem as FILE:LINE:COLUMN: error: MESSAGE and exits 2 if there is any."
    )

    @Argument(help: "Job files or directories (default: jobs/).")
    var paths: [String] = []

    func run() throws {
        let result = loadJobs(paths).result
        guard let workload = result.workload else { throw ExitCode(ExitStatus.invalid) }
        print("\(workload.jobs.count) jobs in \(result.files.count) files are valid")
    }
}

/// Loads job files, and the plugins their jobs name, and prints every problem to standard error.
func loadJobs(_ paths: [String]) -> (result: JobFileLoader.Result, plugins: PluginCatalog) {
    let jobPaths = paths.isEmpty ? ["jobs"] : paths
    var catalog = PluginCatalog(searchPath: [])
    let result = JobFileLoader.load(paths: jobPaths) { workload in
        catalog = PluginCatalog(
            searchPath: PluginCatalog.standardSearchPath(
                pluginPaths: workload.pluginPaths, jobPaths: jobPaths))
        return catalog.problems(in: workload).map { Diagnostic(at: $0.location, $0.message) }
    }
    for diagnostic in result.diagnostics { printError(diagnostic.description) }
    if result.diagnostics.hasErrors {
        let count = result.diagnostics.filter { $0.severity == .error }.count
        printError("\(count) error\(count == 1 ? "" : "s"); nothing was run")
    }
    return (result, catalog)
}
