import ArgumentParser
import Foundation
import JobRunnerCore
import JobRunnerPluginHost
import JobRunnerYAML

/// `jobrunner plugins [PATH…]`: where plugins are looked for, and what was found there.
struct PluginsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins",
        abstract: "List the plugins found for these job files: handlers, versions, where from.",
        discussion: """
            Looks where `run` looks (SPEC 6): plugins.paths of the job files, $JOBRUNNER_PLUGIN_PATH, \
            plugins/ beside each job directory, the directory of the jobrunner executable.
            """
    )

    @Argument(help: "Job files or directories whose plugins.paths count (default: jobs/).")
    var paths: [String] = []

    @OptionGroup var unusedState: UnusedStateOption

    func run() throws {
        let jobPaths = JobSet.jobPaths(paths)
        // Only plugins.paths matter here; a job file with problems still lists what it can.
        let files = JobFileLoader.load(paths: jobPaths.filter { FileManager.default.fileExists(atPath: $0) })
        let catalog = JobSet.pluginCatalog(
            pluginPaths: files.jobsAsRead.pluginPaths, jobPaths: jobPaths)
        print("search path (first match wins):")
        for directory in catalog.searchPath {
            let exists = FileManager.default.fileExists(atPath: directory)
            print("  \(directory)\(exists ? "" : "  (missing)")")
        }
        let found = catalog.discover()
        guard !found.isEmpty else {
            print("no plugins found (a plugin is a lib<name>.so; see docs/writing-a-plugin.md)")
            return
        }
        var rows = [["PLUGIN", "VERSION", "ABI", "SWIFT", "HANDLERS", "PATH"]]
        var problems: [String] = []
        for entry in found {
            switch entry.result {
            case .success(let plugin):
                rows.append([
                    plugin.name, plugin.version, String(PluginCatalog.abiVersion), plugin.swiftVersion ?? "-",
                    plugin.handlers.map { "\(plugin.name).\($0)" }.joined(separator: ", "), plugin.path,
                ])
            case .failure(let error):
                problems.append("\(entry.name): \(error)")
            }
        }
        // Names, versions and problems come from the libraries: escaped before they are shown.
        rows = rows.map { $0.map(VisibleText.escaped) }
        for row in rows { print(Self.format(row, widths: Self.widths(rows))) }
        if !problems.isEmpty {
            print("\nnot loadable:")
            for problem in problems { print("  \(VisibleText.escaped(problem))") }
        }
    }

    static func widths(_ rows: [[String]]) -> [Int] {
        (0..<(rows.first?.count ?? 0)).map { column in rows.map { $0[column].count }.max() ?? 0 }
    }

    static func format(_ row: [String], widths: [Int]) -> String {
        zip(row, widths).enumerated().map { index, pair in
            index == row.count - 1 ? pair.0 : pair.0.padding(toLength: pair.1, withPad: " ", startingAt: 0)
        }.joined(separator: "  ")
    }
}
