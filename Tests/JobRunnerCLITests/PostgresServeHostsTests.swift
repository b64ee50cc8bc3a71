import Foundation
import Glibc
import JobRunnerTesting
import Testing

/// Three `serve` hosts on one PostgreSQL store with a job due every second (SPEC 8): the
/// deciding one killed with `kill -9` and started again; every (job, date) is opened once.
@Suite(.enabled(if: ThrowawayPostgres.unavailable == nil, ThrowawayPostgres.skipComment))
struct PostgresServeHostsTests {
    @Test func threeServeHostsOpenEachOccurrenceOnceThoughTheDecidingOneIsKilled() async throws {
        let cluster = try await ThrowawayPostgres.shared()
        let url = try await cluster.makeDatabase()
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            jobs:
              tick:
                every: 1s
                run: 'echo "$JOBRUNNER_RUN $HOST_TAG" >> "$LEDGER"'

            """
        ])
        #expect(try await workspace.run("migrate", "--store", url).status == 0)
        let ledger = workspace.root + "/ledger"
        var hosts: [String: Process] = [:]
        // Kept open while the hosts run (they write a line or two).
        var pipes: [Pipe] = []
        func serve(_ tag: String) throws -> Process {
            let (out, err) = (Pipe(), Pipe())
            pipes += [out, err]
            return try workspace.start(
                ["serve", "jobs", "--store", url, "--progress", "none"] + PostgresHostFaultTests.timing,
                environment: ["LEDGER": ledger, "HOST_TAG": tag], stdout: out, stderr: err)
        }
        func lines() -> [[String]] {
            workspace.read("ledger").split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        }
        /// Waits until `count` more occurrences than now were run.
        func more(_ count: Int) async -> Bool {
            let now = lines().count
            return await PostgresHostFaultTests.until { lines().count >= now + count }
        }

        hosts["A"] = try serve("A")
        #expect(await more(1), "A decides and runs the first occurrence")
        hosts["B"] = try serve("B")
        hosts["C"] = try serve("C")
        #expect(await more(6))
        let decider = try #require(hosts["A"])
        kill(decider.processIdentifier, SIGKILL)
        _ = await waitForExit(decider)
        #expect(await more(4), "another host took over")
        hosts["A"] = try serve("A")
        #expect(await more(6))
        for process in hosts.values { kill(process.processIdentifier, SIGTERM) }
        for process in hosts.values { _ = await waitForExit(process) }
        pipes.removeAll()

        let listed = try await workspace.run(
            ["runs", "--json", "--job", "tick", "--limit", "100000"], environment: ["JOBRUNNER_STORE": url])
        var runs: [[String: Any]] = []
        for line in listed.stdout.split(separator: "\n") {
            runs.append(
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]))
        }
        let dates = runs.compactMap { $0["scheduledAt"] as? String }
        #expect(dates.count == runs.count && !dates.isEmpty)
        #expect(Set(dates).count == dates.count, "each date opened once: \(dates.sorted())")
        let ids = Set(runs.compactMap { $0["id"] as? String })
        let ran = lines()
        #expect(Set(ran.map { $0[0] }).isSubset(of: ids), "every occurrence run is a stored run")
        // An occurrence may run twice only when the killed host was running it.
        let twice = Dictionary(grouping: ran.map { $0[0] }) { $0 }.filter { $0.value.count > 1 }
        #expect(twice.count <= 1 && twice.values.allSatisfy { $0.count == 2 }, "\(twice)")
        #expect(Set(ran.map { $0[1] }).count >= 2, "more than one host ran occurrences")
    }
}
