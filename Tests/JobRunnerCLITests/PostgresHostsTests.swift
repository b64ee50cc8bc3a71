import Foundation
import JobRunnerTesting
import Testing

/// Several hosts (`jobrunner` processes on this machine) sharing one run on a PostgreSQL store
/// (SPEC 8), checked with a ledger the jobs write: every job once, and each host did some.
@Suite(.enabled(if: ThrowawayPostgres.unavailable == nil, ThrowawayPostgres.skipComment))
struct PostgresHostsTests {
    /// Each job appends its id and its host's tag to the ledger. `pair-a` and `pair-b` each
    /// wait until both are running: with `--jobs 1` on each host, no host can run both, so
    /// the run finishes only if the second host took one. Then `leaves` more, and `end`.
    static func graph(leaves: Int) -> String {
        let record = #"echo "$JOBRUNNER_JOB $HOST_TAG" >> "$LEDGER""#
        var text = "jobs:\n"
        for name in ["pair-a", "pair-b"] {
            text += """
                  \(name):
                    run: '\(record); touch "$MEET/\(name)"; while [ "$(ls "$MEET" | wc -l)" -lt 2 ]; do sleep 0.05; done'

                """
        }
        for index in 1...leaves {
            text += "  leaf-\(index):\n    needs: [pair-a, pair-b]\n    run: '\(record)'\n"
        }
        text += "  end:\n    needs: [\((1...leaves).map { "leaf-\($0)" }.joined(separator: ", "))]\n"
        text += "    run: '\(record)'\n"
        return text
    }

    @Test func twoHostsRunOneGraphEveryJobOnceAndEachDidSome() async throws {
        let cluster = try await ThrowawayPostgres.shared()
        let url = try await cluster.makeDatabase()
        let leaves = 200
        let workspace = try Workspace(files: ["jobs.yaml": Self.graph(leaves: leaves)])
        #expect(try await workspace.run("migrate", "--store", url).status == 0)
        let ledger = workspace.root + "/ledger"
        let meet = workspace.root + "/meet"
        try FileManager.default.createDirectory(atPath: meet, withIntermediateDirectories: true)

        var hosts: [(tag: String, process: Process, out: Pipe, err: Pipe)] = []
        for tag in ["A", "B"] {
            let out = Pipe()
            let err = Pipe()
            let process = try workspace.start(
                ["run", "jobs", "--store", url, "--jobs", "1", "--progress", "none"],
                environment: ["LEDGER": ledger, "MEET": meet, "HOST_TAG": tag], stdout: out, stderr: err)
            hosts.append((tag, process, out, err))
        }
        var finishedHosts: [String: Finished] = [:]
        for host in hosts {
            finishedHosts[host.tag] = await finished(host.process, stdout: host.out, stderr: host.err)
        }
        for (tag, result) in finishedHosts {
            #expect(result.status == 0, "host \(tag): \(result.stderr)")
        }
        // One of them decided; the other said it ran the first one's attempts.
        let workerSaid = finishedHosts.values.filter { $0.stderr.contains("this host runs its attempts") }
        #expect(workerSaid.count == 1, "\(finishedHosts.mapValues(\.stderr))")

        let lines = workspace.read("ledger").split(separator: "\n").map { $0.split(separator: " ") }
        let jobs = lines.map { String($0[0]) }
        let expected = Set(["pair-a", "pair-b", "end"] + (1...leaves).map { "leaf-\($0)" })
        #expect(Set(jobs) == expected, "every job ran")
        #expect(
            jobs.count == expected.count, "no job ran twice: \(jobs.count) lines for \(expected.count) jobs")
        let byHost = Dictionary(grouping: lines.compactMap { $0.count == 2 ? String($0[1]) : nil }) { $0 }
        #expect(byHost["A"]?.isEmpty == false && byHost["B"]?.isEmpty == false, "each host ran some jobs")

        let status = try await workspace.run(["status", "--json"], environment: ["JOBRUNNER_STORE": url])
        let document = try statusJSON(status.stdout)
        let states = try #require(document["jobs"] as? [[String: Any]]).compactMap { $0["state"] as? String }
        #expect(states.count == expected.count && states.allSatisfy { $0 == "succeeded" })
        // Every queued row was taken by the deciding runner: nothing is left behind.
        let left = try await cluster.psql(
            "SELECT count(*) FROM queued_attempts", database: PostgresStoreCLITests.database(of: url))
        #expect(left.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }
}
