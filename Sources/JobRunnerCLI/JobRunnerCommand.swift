public import ArgumentParser
import Foundation
import Glibc
import JobRunnerCore

/// The `jobrunner` command line.
public struct JobRunnerCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "jobrunner",
        abstract: "Runs jobs and pipelines described in YAML, durably.",
        discussion: """
            Every state change is stored in LMDB in the state directory before it is reported, so a \
            crash loses nothing: the next `jobrunner run` resumes where the last one stopped.
            """,
        version: JobRunnerVersion.current,
        subcommands: [
            RunCommand.self, ServeCommand.self, ValidateCommand.self, StatusCommand.self, RunsCommand.self,
            PruneCommand.self,
            LogsCommand.self, GraphCommand.self,
            RetryCommand.self, SkipCommand.self, CancelCommand.self, TriggerCommand.self, SuspendCommand.self,
            ResumeCommand.self,
            PluginsCommand.self, NextCommand.self, PluginCallCommand.self, PluginDescribeCommand.self,
            PluginWorkerCommand.self, WaitCommand.self, WebCommand.self, MigrateCommand.self,
            HostsCommand.self,
            VersionCommand.self,
            ReportCommand.self,
        ]
    )

    public init() {}

    /// Parses the command line and runs the chosen command. Usage errors exit 2, as SPEC 4
    /// says for invalid usage (ArgumentParser's own default is 64).
    public static func runMain(_ arguments: [String]? = nil) async {
        // A reader of `--events -` or of the progress lines that goes away (`| head`) must not
        // kill a runner with SIGPIPE mid-run: writes to it fail instead, and the run goes on.
        signal(SIGPIPE, SIG_IGN)
        // SIGUSR1 is a runner's wake-up call (`retry`, `suspend` and the others send it to the pid
        // in `runner.lock`); a process it reaches by mistake, or a runner still loading its job
        // files, must not die of it. A runner turns it into a look at the store once it is set up.
        signal(SIGUSR1, SIG_IGN)
        var command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            exitReporting(error, usage: true)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            // A command's own error has no usage to show: the command line was fine.
            exitReporting(error, usage: false)
        }
    }

    /// Prints an error with the one prefix every message of the command line has
    /// (`jobrunner: `), and exits with its status: usage errors 2 (SPEC 4), not ArgumentParser's 64.
    private static func exitReporting(_ error: any Error, usage: Bool) -> Never {
        let code = exitCode(for: error)
        if code == .validationFailure {
            var text = usage ? fullMessage(for: error) : message(for: error)
            if text.hasPrefix("Error: ") { text = "jobrunner: " + text.dropFirst("Error: ".count) }
            printError(text.hasPrefix("jobrunner: ") ? text : "jobrunner: " + text)
            Foundation.exit(ExitStatus.invalid)
        }
        if code != .success, error as? ExitCode == nil, error as? CleanExit == nil {
            let text = message(for: error)
            if !text.isEmpty { printError("jobrunner: " + text) }
            Foundation.exit(code.rawValue)
        }
        exit(withError: error)
    }
}

/// This build's version.
public enum JobRunnerVersion {
    public static let current = "0.1.0"
}

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The state directory (default: $JOBRUNNER_STATE, else ./.jobrunner).", valueName: "dir"))
    var state: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A PostgreSQL store shared by hosts, postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE (default: $JOBRUNNER_STORE, else the LMDB database in the state directory).",
            valueName: "url"))
    var store: String?

    /// The state directory chosen by `--state`, `$JOBRUNNER_STATE`, or the default, and the
    /// store: `--store`, `$JOBRUNNER_STORE`, else the LMDB database in that directory.
    var stateDirectory: StoreOpener {
        let environment = ProcessInfo.processInfo.environment
        func given(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        return StoreOpener(
            path: state ?? given("JOBRUNNER_STATE") ?? ".jobrunner", store: store ?? given("JOBRUNNER_STORE"))
    }
}

/// `--state DIR` on the commands that read no state (`validate`, `graph`, `next`, `plugins`):
/// SPEC 4 lists it among the common options, so a script that passes it to every command
/// works; it changes nothing there, and nothing is created.
struct UnusedStateOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Accepted as on every command; this one reads no state.", valueName: "dir"))
    var state: String?
}

/// Exit statuses of SPEC 4.
enum ExitStatus {
    static let failed: Int32 = 1
    static let invalid: Int32 = 2
    static let stateUnusable: Int32 = 3
}

/// Writes a line (or several) to standard error. Messages quote what users and jobs wrote (a
/// job name on the command line, a reason from the store): every control character but the
/// line breaks between lines is shown escaped, so none reaches the terminal as such.
func printError(_ text: String) {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(VisibleText.escaped)
    // Not FileHandle's `write`, which traps when standard error is a closed pipe.
    writeText(STDERR_FILENO, lines.joined(separator: "\n") + "\n")
}
