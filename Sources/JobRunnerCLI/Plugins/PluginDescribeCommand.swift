import ArgumentParser
import Foundation
import Glibc
import JobRunnerPluginHost

/// `jobrunner plugin-describe`: the child side of loading a plugin library safely. Loads the
/// library in this process, reads its descriptor and asks its parameter checks (a JSON array
/// of `PluginParameterCheck` on standard input), and writes a `PluginProbeReply` as JSON on
/// standard output. If the library crashes whoever loads it, only this process dies, and the
/// runner that started it says so.
struct PluginDescribeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugin-describe",
        abstract: "Load a plugin library and describe it (used to vet plugins; not for people).",
        shouldDisplay: false
    )

    @Option(help: "The plugin library's path.") var library: String
    @Option(help: "The plugin's name.") var plugin: String

    func run() throws {
        // What the library's constructors or checks print goes to standard error, not into the
        // description (a constructor that printed a banner was refused as unreadable).
        let replies = ResponseChannel.takeStandardOutput()
        let input = FileHandle.standardInput.readDataToEndOfFile()
        let checks = try JSONDecoder().decode([PluginParameterCheck].self, from: input)
        let reply = PluginProbeReply.probe(name: plugin, path: library, checks: checks)
        // Not FileHandle's `write`, which traps when the runner has closed its end.
        fflush(nil)
        guard writeBytes(replies, try JSONEncoder().encode(reply)) == 0 else {
            throw ExitCode(ExitStatus.failed)
        }
    }
}
