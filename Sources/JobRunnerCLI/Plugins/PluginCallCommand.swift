import ArgumentParser
import Foundation
import Glibc
import JobRunnerPluginHost

/// `jobrunner plugin-call`: the child side of `isolation: process`. Reads one request of the
/// plugin ABI on standard input, calls the handler in this process, writes the response on
/// standard output. If the handler crashes, only this process dies.
struct PluginCallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugin-call",
        abstract: "Run one plugin call (used by `isolation: process`; not for people).",
        shouldDisplay: false
    )

    @Option(help: "The plugin library's path.") var library: String
    @Option(help: "The plugin's name.") var plugin: String
    @Option(help: "The handler's name.") var handler: String

    func run() throws {
        // The response moves off standard output, which goes where standard error goes (the
        // attempt's log): what a handler or a constructor prints cannot garble the response.
        let responses = ResponseChannel.takeStandardOutput()
        let request = [UInt8](FileHandle.standardInput.readDataToEndOfFile())
        let catalog = PluginCatalog(searchPath: [(library as NSString).deletingLastPathComponent])
        switch catalog.plugin(plugin) {
        case .failure(let error):
            printError("jobrunner plugin-call: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        case .success(let loaded):
            let response = loaded.call(handler: handler, request: request)
            // Not FileHandle's `write`, which traps when the runner has closed its end.
            fflush(nil)
            guard writeBytes(responses, response) == 0 else { throw ExitCode(ExitStatus.failed) }
        }
    }
}

/// The channel a child answers its runner on, moved off standard output.
enum ResponseChannel {
    /// A copy of standard output (close-on-exec, so a process the plugin starts does not hold
    /// it), with standard output itself pointed at standard error from now on.
    static func takeStandardOutput() -> Int32 {
        let channel = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)
        guard channel >= 0 else { return STDOUT_FILENO }
        dup2(STDERR_FILENO, STDOUT_FILENO)
        return channel
    }
}
