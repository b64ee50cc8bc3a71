import ArgumentParser
import CJobRunnerSystem
import Foundation
import Glibc
import JobRunnerCore
import JobRunnerYAML

/// `--env-file FILE` (SPEC 3.1): dotenv files whose variables join the runner's environment
/// before the job files are loaded, so `${NAME}` in `env:` and `with:` and every job see them.
struct EnvFileOptions: ParsableArguments {
    @Option(
        name: .customLong("env-file"),
        help: ArgumentHelp(
            "Add the NAME=value lines of this file to the environment before ${NAME} is expanded (repeatable; a later file wins, and a variable already set wins over every file).",
            valueName: "file"))
    var envFiles: [String] = []

    /// Adds the files' variables to this process's environment, where it does not set them
    /// already, and returns the environment. Prints every problem and exits 2 when there is one.
    func apply() throws -> [String: String] {
        var fromFiles: [String: String] = [:]
        var problems: [Diagnostic] = []
        for path in envFiles {
            let (variables, found) = EnvFile.load(path: path)
            problems += found
            for (name, value) in variables { fromFiles[name] = value }
        }
        guard problems.isEmpty else {
            for problem in problems { printError(problem.description) }
            let count = problems.count
            printError("\(count) error\(count == 1 ? "" : "s") in --env-file; nothing was run")
            throw ExitCode(ExitStatus.invalid)
        }
        let environment = ProcessInfo.processInfo.environment
        let added = fromFiles.filter { environment[$0.key] == nil }
        // Set before any thread of the runner starts; children inherit them with the rest.
        Self.extendEnvironment(with: added)
        return EnvFile.adding(fromFiles.map { ($0.key, $0.value) }, to: environment)
    }

    /// Adds `variables` (none of them set yet) to this process's environment at once: a new
    /// `environ` holding the old entries and the new ones. `setenv` per variable searches the
    /// whole environment each time, which made a file of 100,000 lines take most of a minute.
    /// The new array and its strings live as long as the process, as `setenv`'s copies do.
    private static func extendEnvironment(with variables: [String: String]) {
        guard !variables.isEmpty else { return }
        var entries: [UnsafeMutablePointer<CChar>?] = []
        if var cursor = jobrunner_environment() {
            while let entry = cursor.pointee {
                entries.append(entry)
                cursor += 1
            }
        }
        for (name, value) in variables.sorted(by: { $0.key < $1.key }) {
            entries.append(strdup(name + "=" + value))
        }
        entries.append(nil)
        let table = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: entries.count)
        table.initialize(from: entries, count: entries.count)
        jobrunner_replace_environment(table)
    }
}
