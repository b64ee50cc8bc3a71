import Foundation
import JobRunnerTesting
import Testing

/// `--store URL` end to end, on the tests' own PostgreSQL cluster (``ThrowawayPostgres``):
/// `migrate`, a run of a small graph, and the commands that read it; and every kind of bad
/// store refused in one sentence with exit status 3, nothing written.
@Suite(.enabled(if: ThrowawayPostgres.unavailable == nil, ThrowawayPostgres.skipComment))
struct PostgresStoreCLITests {
    static let graph = """
        jobs:
          fetch:
            run: echo fetched; echo "rev=abc123" >> "$JOBRUNNER_OUTPUT"
          build:
            needs: [fetch]
            run: echo "building $JOBRUNNER_OUT_FETCH_REV"
          lint:
            needs: [fetch]
            run: "true"
          ship:
            needs: [build, lint]
            run: echo shipped
        """

    @Test func aRunOnAPostgresStoreIsReadBackByStatusRunsAndLogs() async throws {
        let cluster = try await ThrowawayPostgres.shared()
        let url = try await cluster.makeDatabase()
        let workspace = try Workspace(files: ["jobs.yaml": Self.graph])

        let migrated = try await workspace.run("migrate", "--store", url)
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stdout.contains("created schema 2"))

        let run = try await workspace.run("run", "jobs", "--store", url, "--progress", "none")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: workspace.state + "/db"), "no LMDB database was made")

        // Read by another process, through the environment variable this time.
        let status = try await workspace.run(["status", "--json"], environment: ["JOBRUNNER_STORE": url])
        #expect(status.status == 0, "\(status.stderr)")
        let document = try statusJSON(status.stdout)
        let jobs = try #require(document["jobs"] as? [[String: Any]])
        #expect(Set(jobs.compactMap { $0["id"] as? String }) == ["fetch", "build", "lint", "ship"])
        #expect(jobs.allSatisfy { $0["state"] as? String == "succeeded" })
        let fetch = try #require(jobs.first { $0["id"] as? String == "fetch" })
        #expect((fetch["outputs"] as? [String: String]) == ["rev": "abc123"])

        let runs = try await workspace.run("runs", "--json", "--store", url)
        #expect(runs.status == 0, "\(runs.stderr)")
        #expect(runs.stdout.split(separator: "\n").count == 1)
        #expect(runs.stdout.contains("\"succeeded\""))

        let logs = try await workspace.run("logs", "build", "--store", url)
        #expect(logs.status == 0, "\(logs.stderr)")
        #expect(logs.stdout.contains("building abc123"), "the output of fetch reached build")

        // The rows are in the database, where another host would read them.
        let stored = try await cluster.psql(
            "SELECT count(*) FROM jobs WHERE state = 'succeeded'", database: Self.database(of: url))
        #expect(stored.trimmingCharacters(in: .whitespacesAndNewlines) == "4")
    }

    @Test func aSecondRunnerOnTheStoreRunsTheFirstOnesAttemptsNamingIt() async throws {
        let cluster = try await ThrowawayPostgres.shared()
        let url = try await cluster.makeDatabase()
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            jobs:
              hold:
                run: echo started; while [ ! -f "$RELEASE" ]; do sleep 0.05; done
            """
        ])
        #expect(try await workspace.run("migrate", "--store", url).status == 0)
        let release = workspace.root + "/release"
        let out = Pipe()
        let first = try workspace.start(
            ["run", "jobs", "--store", url, "--progress", "plain"], environment: ["RELEASE": release],
            stdout: out)
        let lines = LineReader(out)
        #expect(await lines.waitFor("started"), "the first runner's job runs")
        // SPEC 8: the second host decides nothing; it runs the first one's attempts until the
        // run ends, and says whose.
        let secondOut = Pipe()
        let secondErr = Pipe()
        let second = try workspace.start(
            ["run", "jobs", "--store", url, "--progress", "plain"], environment: ["RELEASE": release],
            stdout: secondOut, stderr: secondErr)
        let said = LineReader(secondErr)
        #expect(await said.waitFor("this host runs its attempts"))
        #expect(said.all.joined().contains("pid \(first.processIdentifier)"), "\(said.all)")
        _ = FileManager.default.createFile(atPath: release, contents: nil)
        #expect(await waitForExit(first) == 0)
        #expect(await waitForExit(second) == 0, "\(said.all)")
    }

    @Test func everyKindOfBadStoreIsOneSentenceAndExit3WithNothingWritten() async throws {
        let cluster = try await ThrowawayPostgres.shared()
        let workspace = try Workspace(files: ["jobs.yaml": Self.graph])

        let foreign = try await cluster.makeDatabase()
        try await cluster.psql("CREATE TABLE invoices (id int)", database: Self.database(of: foreign))
        let newer = try await cluster.makeDatabase()
        #expect(try await workspace.run("migrate", "--store", newer).status == 0)
        try await cluster.psql(
            "INSERT INTO jobrunner_migrations (version, summary, applied_by) VALUES (99, 'later', 'a newer jobrunner')",
            database: Self.database(of: newer))
        let empty = try await cluster.makeDatabase()
        let nowhere = "postgres://postgres@/jobrunner?host=\(workspace.root)/no-server-here"
        let wrongPassword = cluster.url(
            database: Self.database(of: empty), user: ThrowawayPostgres.passwordRole, password: "not-it")

        let cases: [(String, String, String)] = [
            ("unreachable", nowhere, "cannot reach PostgreSQL at "),
            ("wrong credentials", wrongPassword, "refused user \(ThrowawayPostgres.passwordRole)"),
            ("another application's database", foreign, "holds tables that are not jobrunner's (invoices)"),
            ("a newer schema", newer, "has schema 99, written by a newer jobrunner"),
            ("no schema yet", empty, "run `jobrunner migrate --store URL`"),
            ("not a URL", "postgres://nobody", "write it as postgres://"),
        ]
        for (what, url, says) in cases {
            for arguments in [["status"], ["runs"], ["run", "jobs"], ["suspend", "default"]] {
                let result = try await workspace.run(arguments + ["--store", url], environment: [:])
                #expect(result.status == 3, "\(what), \(arguments[0]): \(result.stderr)")
                let lines = result.stderr.split(separator: "\n")
                #expect(lines.count == 1, "\(what), \(arguments[0]): one sentence: \(result.stderr)")
                #expect(result.stderr.hasPrefix("jobrunner: "), "\(what)")
                #expect(result.stderr.contains(says), "\(what), \(arguments[0]): \(result.stderr)")
                #expect(!result.stderr.contains("not-it"), "the password is never printed")
            }
        }
        #expect(try await workspace.run("migrate", "--store", foreign).status == 3)
        #expect(try await workspace.run("migrate", "--store", newer).status == 3)
        #expect(
            try await cluster.psql(
                "SELECT string_agg(table_name, ',') FROM information_schema.tables WHERE table_schema = 'public'",
                database: Self.database(of: foreign)
            ).trimmingCharacters(in: .whitespacesAndNewlines) == "invoices", "nothing was written beside it")
        #expect(
            try await cluster.psql("SELECT count(*) FROM runs", database: Self.database(of: newer))
                .trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        #expect(
            try await cluster.psql(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
                database: Self.database(of: empty)
            ).trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }

    /// The database named by a URL of ``ThrowawayPostgres/url(database:user:password:)``.
    static func database(of url: String) -> String {
        String((URLComponents(string: url)?.path ?? "").drop { $0 == "/" })
    }
}
