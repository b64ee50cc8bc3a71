import ArgumentParser
import Foundation
import JobRunnerCore
import JobRunnerJSON

/// `jobrunner hosts --store URL [--json]`: the hosts that work on a shared store (SPEC 8), with
/// the age of each one's heartbeat and its work.
struct HostsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hosts",
        abstract: "List the hosts of a PostgreSQL store (--store URL): heartbeat age and work.",
        discussion: """
            Every `run` or `serve` on the store records a heartbeat each --heartbeat. HEARTBEAT is \
            how long ago the last one was; a host whose heartbeat is older than its --lease has \
            lost its attempts, and other hosts take them back 10s after the lease ends. RUNNING is \
            what the host said it ran at its heartbeat, HOLDING what the store has it holding now, \
            DONE the attempts it completed. A host that stopped keeps its last row.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print JSON lines instead of a table.")
    var json = false

    func run() async throws {
        let hosts: [HostRecord]
        do {
            hosts = try await global.stateDirectory.hosts()
        } catch {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
        if json {
            for host in hosts { print(Self.json(host)) }
            return
        }
        guard !hosts.isEmpty else {
            print("no host has worked on \(global.stateDirectory.path) yet")
            return
        }
        let rows = hosts.map { host in
            [
                host.name, String(host.pid), Timestamps.elapsed(Self.seconds(host.heartbeatAge)) + " ago",
                String(host.running), String(host.holding), String(host.completed),
            ]
        }
        print(Table(header: ["HOST", "PID", "HEARTBEAT", "RUNNING", "HOLDING", "DONE"], rows: rows).text)
    }

    /// A line of `hosts --json`.
    static func json(_ host: HostRecord) -> String {
        var line = JSONWriter(capacity: 160)
        line.beginObject()
        line.member("host", host.name)
        line.member("pid", host.pid)
        line.member("heartbeatAgeSeconds", seconds(host.heartbeatAge))
        line.member("running", host.running)
        line.member("holding", host.holding)
        line.member("completed", host.completed)
        line.endObject()
        return String(decoding: line.drain(), as: UTF8.self)
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
