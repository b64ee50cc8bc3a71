import Foundation
import Glibc
import JobRunnerTesting
import Testing

/// A host lost mid-run on a PostgreSQL store (SPEC 8): killed, or stopped past its lease and
/// continued. Each job writes a ledger; what the lost host was running runs again on another
/// host, nothing else twice, and the lost host's late results change nothing.
@Suite(.enabled(if: ThrowawayPostgres.unavailable == nil, ThrowawayPostgres.skipComment))
struct PostgresHostFaultTests {
    /// Four jobs. Each appends `start JOB HOST SECONDS` to the ledger and keeps its shell's pid
    /// in `$MEET/pid-JOB-HOST`. On host B a job marks `$MEET/b-JOB` and holds until
    /// `$MEET/release-JOB` appears; elsewhere it first waits for some `b-*` (so host A, with
    /// `--jobs 1`, cannot run them all before B joins). Then it outputs `host=HOST` and appends
    /// `done JOB HOST`.
    static let graph: String = {
        let body = [
            #"echo "start $JOBRUNNER_JOB $HOST_TAG $(date +%s.%N)" >> "$LEDGER""#,
            #"echo $$ > "$MEET/pid-$JOBRUNNER_JOB-$HOST_TAG""#,
            #"if [ "$HOST_TAG" = B ]; then touch "$MEET/b-$JOBRUNNER_JOB"; while [ ! -e "$MEET/release-$JOBRUNNER_JOB" ]; do sleep 0.1; done"#,
            #"else while ! ls "$MEET"/b-* > /dev/null 2>&1; do sleep 0.05; done; fi"#,
            #"echo "host=$HOST_TAG" >> "$JOBRUNNER_OUTPUT""#,
            #"echo "done $JOBRUNNER_JOB $HOST_TAG" >> "$LEDGER""#,
        ].joined(separator: "; ")
        return "jobs:\n" + (1...4).map { "  w-\($0):\n    run: '\(body)'\n" }.joined()
    }()

    static let jobs = (1...4).map { "w-\($0)" }
    /// Short, so the tests are quick; other hosts take an attempt back `grace` after its lease.
    static let timing = ["--heartbeat", "500ms", "--lease", "2s"]
    static let lease: TimeInterval = 2
    static let grace: TimeInterval = 10

    /// One ledger line.
    struct Entry {
        var what: String
        var job: String
        var host: String
        var at: TimeInterval?
    }

    /// A run on a fresh store shared by host A (which decides) and host B (which joins once A
    /// runs its first job), B holding two attempts when `body` gets it.
    final class Scene: @unchecked Sendable {
        // @unchecked: set once in `start`, read after.
        let workspace: Workspace
        let url: String
        let cluster: ThrowawayPostgres
        let meet: String
        var a: (process: Process, out: Pipe, err: Pipe)?
        var b: (process: Process, out: Pipe, err: Pipe)?

        init() async throws {
            cluster = try await ThrowawayPostgres.shared()
            url = try await cluster.makeDatabase()
            workspace = try Workspace(files: ["jobs.yaml": PostgresHostFaultTests.graph])
            meet = workspace.root + "/meet"
            try FileManager.default.createDirectory(atPath: meet, withIntermediateDirectories: true)
        }

        deinit {
            // Whatever is left of B's children ends (a killed B leaves them).
            for job in PostgresHostFaultTests.jobs {
                if let pid = pid(of: job, on: "B") { kill(pid, SIGKILL) }
            }
        }

        func host(_ tag: String) throws -> (process: Process, out: Pipe, err: Pipe) {
            let out = Pipe()
            let err = Pipe()
            let process = try workspace.start(
                ["run", "jobs", "--store", url, "--jobs", tag == "A" ? "1" : "2", "--progress", "none"]
                    + PostgresHostFaultTests.timing,
                environment: ["LEDGER": workspace.root + "/ledger", "MEET": meet, "HOST_TAG": tag],
                stdout: out, stderr: err)
            return (process, out, err)
        }

        /// Migrates, starts A, waits for its first job, starts B, waits until B runs two.
        func start() async throws {
            #expect(try await workspace.run("migrate", "--store", url).status == 0)
            a = try host("A")
            #expect(
                await PostgresHostFaultTests.until {
                    self.ledger.contains { $0.what == "start" && $0.host == "A" }
                })
            b = try host("B")
            try #require(await PostgresHostFaultTests.until { self.marked.count == 2 }, "B took two attempts")
        }

        var ledger: [Entry] {
            workspace.read("ledger").split(separator: "\n").compactMap { line in
                let parts = line.split(separator: " ").map(String.init)
                guard parts.count >= 3 else { return nil }
                return Entry(
                    what: parts[0], job: parts[1], host: parts[2],
                    at: parts.count > 3 ? Double(parts[3]) : nil)
            }
        }

        /// The jobs B took, by their marks.
        var marked: [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: meet)) ?? [])
                .filter { $0.hasPrefix("b-") }.map { String($0.dropFirst(2)) }.sorted()
        }

        func pid(of job: String, on host: String) -> pid_t? {
            pid_t(
                workspace.read("meet/pid-\(job)-\(host)").trimmingCharacters(in: .whitespacesAndNewlines))
        }

        /// The jobs' states and outputs in the store, by job.
        func stored() async throws -> [String: [String: Any]] {
            let status = try await workspace.run(["status", "--json"], environment: ["JOBRUNNER_STORE": url])
            let jobs = try #require(try statusJSON(status.stdout)["jobs"] as? [[String: Any]])
            return Dictionary(jobs.map { ($0["id"] as? String ?? "", $0) }) { first, _ in first }
        }

        /// `hosts --json`, by pid.
        func hosts() async throws -> [Int: [String: Any]] {
            let listed = try await workspace.run("hosts", "--store", url, "--json")
            #expect(listed.status == 0, "\(listed.stderr)")
            var byPID: [Int: [String: Any]] = [:]
            for line in listed.stdout.split(separator: "\n") {
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                byPID[object["pid"] as? Int ?? 0] = object
            }
            return byPID
        }
    }

    /// Waits for `condition` (a file's content, a process's state), looking every 50 ms.
    static func until(_ condition: () -> Bool) async -> Bool {
        let end = ContinuousClock.now + TestLimits.safety
        while ContinuousClock.now < end {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Whether a process has ended (gone, or a zombie not yet reaped).
    static func ended(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else {
            return true
        }
        // The state follows the command's closing parenthesis.
        guard let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    @Test func aKilledHostsAttemptsRunAgainOnAnotherHostAfterItsLease() async throws {
        let scene = try await Scene()
        try await scene.start()
        let lost = scene.marked
        let b = try #require(scene.b)
        kill(b.process.processIdentifier, SIGKILL)
        let killedAt = Date().timeIntervalSince1970
        _ = await waitForExit(b.process)
        // When B's lease on them ends (as it last renewed it): read before any host may take
        // them back, 10 s after it.
        let leaseEnd = try #require(
            Double(
                try await scene.cluster.psql(
                    """
                    SELECT extract(epoch FROM max(lease_until)) FROM queued_attempts
                    WHERE state = 'running' AND host LIKE '%:\(b.process.processIdentifier)'
                    """, database: PostgresStoreCLITests.database(of: scene.url)
                ).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(leaseEnd <= killedAt + Self.lease + 1, "no renewal after the kill")

        let a = try #require(scene.a)
        let ranA = await finished(a.process, stdout: a.out, stderr: a.err)
        #expect(ranA.status == 0, "\(ranA.stderr)")

        let ledger = scene.ledger
        for job in Self.jobs {
            let done = ledger.filter { $0.what == "done" && $0.job == job }
            #expect(done.map(\.host) == ["A"], "\(job) done once, on A: \(ledger)")
            let starts = ledger.filter { $0.what == "start" && $0.job == job }.map(\.host)
            #expect(starts == (lost.contains(job) ? ["B", "A"] : ["A"]), "\(job): \(starts)")
        }
        // Taken back only once the lease and the grace after it are over, and soon after (the
        // margin is for a loaded machine's heartbeat, claim and process start).
        for job in lost {
            let rerun = try #require(
                ledger.first { $0.what == "start" && $0.job == job && $0.host == "A" }?.at)
            #expect(rerun >= leaseEnd + Self.grace, "\(job) ran again \(rerun - leaseEnd) s after B's lease")
            #expect(
                rerun <= leaseEnd + Self.grace + 60, "\(job) ran again \(rerun - leaseEnd) s after B's lease")
        }
        let stored = try await scene.stored()
        for job in Self.jobs {
            #expect(stored[job]?["state"] as? String == "succeeded")
            #expect(stored[job]?["outputs"] as? [String: String] == ["host": "A"])
        }
        let hosts = try await scene.hosts()
        #expect(hosts[Int(b.process.processIdentifier)]?["holding"] as? Int == 0, "\(hosts)")
        #expect(hosts[Int(a.process.processIdentifier)]?["completed"] as? Int == 4, "\(hosts)")
        let left = try await scene.cluster.psql(
            "SELECT count(*) FROM queued_attempts", database: PostgresStoreCLITests.database(of: scene.url))
        #expect(left.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }

    @Test func aHostStoppedPastItsLeaseHasItsLateResultsRefusedAndItsChildrenEnded() async throws {
        let scene = try await Scene()
        try await scene.start()
        let lost = scene.marked
        let (finishing, holding) = (lost[0], lost[1])
        let b = try #require(scene.b)
        kill(b.process.processIdentifier, SIGSTOP)

        // Both run again on A once B's lease and the grace are over.
        #expect(
            await Self.until {
                Set(scene.ledger.filter { $0.what == "done" && $0.host == "A" }.map(\.job)) == Set(Self.jobs)
            })
        // While B is stopped, one of its children finishes: its result waits in B.
        _ = FileManager.default.createFile(atPath: scene.meet + "/release-\(finishing)", contents: nil)
        #expect(
            await Self.until {
                scene.ledger.contains { $0.what == "done" && $0.job == finishing && $0.host == "B" }
            })
        let a = try #require(scene.a)
        let ranA = await finished(a.process, stdout: a.out, stderr: a.err)
        #expect(ranA.status == 0, "\(ranA.stderr)")

        kill(b.process.processIdentifier, SIGCONT)
        let ranB = await finished(b.process, stdout: b.out, stderr: b.err)
        #expect(
            (ranB.stdout + ranB.stderr).contains("this host ran 0 attempts"), "\(ranB.stdout) \(ranB.stderr)")
        let child = try #require(scene.pid(of: holding, on: "B"))
        #expect(await Self.until { Self.ended(child) }, "B ended its child that still ran")

        let stored = try await scene.stored()
        for job in Self.jobs {
            #expect(stored[job]?["state"] as? String == "succeeded")
            #expect(stored[job]?["attempts"] as? Int == 1)
            #expect(stored[job]?["outputs"] as? [String: String] == ["host": "A"], "B's late result refused")
        }
        let hosts = try await scene.hosts()
        #expect(hosts[Int(b.process.processIdentifier)]?["completed"] as? Int == 0, "\(hosts)")
        #expect(hosts[Int(b.process.processIdentifier)]?["holding"] as? Int == 0, "\(hosts)")
        #expect(hosts[Int(a.process.processIdentifier)]?["completed"] as? Int == 4, "\(hosts)")
        let table = try await scene.workspace.run("hosts", "--store", scene.url)
        #expect(table.stdout.hasPrefix("HOST"), "\(table.stdout)")
        #expect(table.stdout.split(separator: "\n").count == 3, "a header and two hosts: \(table.stdout)")
        let ledger = scene.ledger
        #expect(!ledger.contains { $0.what == "done" && $0.job == holding && $0.host == "B" })
    }

    @Test func hostsWithoutAStoreSaysWhatItNeeds() async throws {
        let workspace = try Workspace(files: [:])
        let result = try await workspace.run(["hosts"], environment: ["JOBRUNNER_STORE": ""])
        #expect(result.status == 3)
        #expect(result.stderr.contains("hosts needs --store URL"), "\(result.stderr)")
    }

    /// Every listening connection of the store's runner killed with `pg_terminate_backend`: an
    /// operator's `cancel` still acts (the runner reads its requests every second besides), and
    /// the run goes on to its end (results are read every second too).
    @Test func anOperatorCommandActsAfterTheListeningConnectionsWereKilled() async throws {
        let cluster = try await ThrowawayPostgres.shared()
        let url = try await cluster.makeDatabase()
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            jobs:
              hold:
                run: 'touch "$MEET/hold"; while [ ! -e "$MEET/never" ]; do sleep 0.1; done'
              after:
                needs: [hold]
                run: 'true'
              free:
                run: 'while [ ! -e "$MEET/hold" ]; do sleep 0.05; done'

            """
        ])
        let meet = workspace.root + "/meet"
        try FileManager.default.createDirectory(atPath: meet, withIntermediateDirectories: true)
        #expect(try await workspace.run("migrate", "--store", url).status == 0)
        let out = Pipe()
        let err = Pipe()
        let runner = try workspace.start(
            ["run", "jobs", "--store", url, "--progress", "none"] + Self.timing, environment: ["MEET": meet],
            stdout: out, stderr: err)
        #expect(await Self.until { FileManager.default.fileExists(atPath: meet + "/hold") })

        let database = PostgresStoreCLITests.database(of: url)
        let killed = try await cluster.psql(
            """
            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
            WHERE datname = '\(database)' AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()
            """, database: database)
        #expect((Int(killed.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) >= 1, "\(killed)")

        let asked = ContinuousClock.now
        let cancel = try await workspace.run(["cancel", "hold", "--store", url], environment: [:])
        let took = ContinuousClock.now - asked
        #expect(cancel.status == 0, "\(cancel.stdout) \(cancel.stderr)")
        #expect(took < .seconds(60), "the cancel acted after \(took)")
        let ran = await finished(runner, stdout: out, stderr: err)
        #expect(ran.status == 1, "\(ran.stderr)")
        let status = try await workspace.run(["status", "--json"], environment: ["JOBRUNNER_STORE": url])
        let jobs = try #require(try statusJSON(status.stdout)["jobs"] as? [[String: Any]])
        let states = Dictionary(jobs.map { ($0["id"] as? String ?? "", $0["state"] as? String ?? "") }) {
            a, _ in a
        }
        #expect(states == ["hold": "cancelled", "after": "blocked", "free": "succeeded"])
    }
}
