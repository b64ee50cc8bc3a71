import ArgumentParser
import Foundation
import JobRunnerCore

/// `jobrunner graph [PATH…] --format dot|mermaid`.
struct GraphCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph", abstract: "Print the dependency graph as Graphviz dot or Mermaid.")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case dot, mermaid
    }

    @Argument(help: "Job files or directories (default: jobs/).")
    var paths: [String] = []

    @OptionGroup var envFiles: EnvFileOptions
    @OptionGroup var unusedState: UnusedStateOption

    @Option(help: "dot or mermaid.")
    var format: Format = .dot

    func run() async throws {
        guard let workload = await JobSet.load(paths, environment: try envFiles.apply()).workload else {
            throw ExitCode(ExitStatus.invalid)
        }
        print(Self.render(workload, format: format), terminator: "")
    }

    static func render(_ workload: Workload, format: Format) -> String {
        var lines: [String] = []
        switch format {
        case .dot:
            lines.append("digraph jobs {")
            lines.append("  rankdir=LR;")
            let byPipeline = Dictionary(grouping: workload.jobs, by: \.pipeline)
            for name in byPipeline.keys.sorted() {
                lines.append("  subgraph \(quote("cluster_" + name)) {")
                lines.append("    label=\(quote(name));")
                for job in byPipeline[name] ?? [] { lines.append("    \(quote(job.id));") }
                lines.append("  }")
            }
            for job in workload.jobs {
                for need in job.needs { lines.append("  \(quote(need)) -> \(quote(job.id));") }
            }
            lines.append("}")
        case .mermaid:
            lines.append("flowchart LR")
            var ids: [String: String] = [:]
            for (index, job) in workload.jobs.enumerated() { ids[job.id] = "j\(index)" }
            let byPipeline = Dictionary(grouping: workload.jobs, by: \.pipeline)
            for name in byPipeline.keys.sorted() {
                lines.append("  subgraph \(name)")
                for job in byPipeline[name] ?? [] {
                    lines.append("    \(ids[job.id] ?? job.id)[\"\(job.id)\"]")
                }
                lines.append("  end")
            }
            for job in workload.jobs {
                for need in job.needs { lines.append("  \(ids[need] ?? need) --> \(ids[job.id] ?? job.id)") }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func quote(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            + "\""
    }
}
