import ArgumentParser
import JobRunnerCore
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
        let result = loadJobs(paths)
        guard let workload = result.workload else { throw ExitCode(ExitStatus.invalid) }
        print("\(workload.jobs.count) jobs in \(result.files.count) files are valid")
    }
}

/// Loads job files and prints their diagnostics to standard error.
func loadJobs(_ paths: [String]) -> JobFileLoader.Result {
    let result = JobFileLoader.load(paths: paths.isEmpty ? ["jobs"] : paths)
    for diagnostic in result.diagnostics { printError(diagnostic.description) }
    if result.diagnostics.hasErrors {
        let count = result.diagnostics.filter { $0.severity == .error }.count
        printError("\(count) error\(count == 1 ? "" : "s"); nothing was run")
    }
    return result
}
