import ArgumentParser
import JobRunnerCore
import JobRunnerYAML

/// `jobrunner validate [PATH…]`: every check of a run, nothing run.
struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check job files without running anything.",
        discussion: "Prints every problem as FILE:LINE:COLUMN: error: MESSAGE and exits 2 if there is any."
    )

    @Argument(help: "Job files or directories (default: jobs/).")
    var paths: [String] = []

    @OptionGroup var envFiles: EnvFileOptions
    @OptionGroup var unusedState: UnusedStateOption

    func run() async throws {
        let jobSet = await JobSet.load(paths, environment: try envFiles.apply())
        guard let workload = jobSet.workload else { throw ExitCode(ExitStatus.invalid) }
        let jobs = workload.jobs.count
        let files = jobSet.result.files.count
        print(
            "\(jobs) job\(jobs == 1 ? "" : "s") in \(files) file\(files == 1 ? "" : "s") \(jobs == 1 ? "is" : "are") valid"
        )
    }
}
