import CJobRunnerSystem
import Foundation
import Synchronization
import Testing

/// A PostgreSQL cluster of the tests' own: `initdb` into a temporary directory, a server that
/// listens only on a unix socket in that directory, `fsync=off` (a test's database need not
/// survive a power loss), one database per test made from a template, and `pg_ctl stop -m
/// immediate` at the end. Nothing assumes a server that already runs, and none that runs is
/// touched.
///
/// ```swift
/// @Test(.enabled(if: ThrowawayPostgres.unavailable == nil, ThrowawayPostgres.skipComment))
/// func something() async throws {
///     let url = try await ThrowawayPostgres.shared().makeDatabase()
///     …
/// }
/// ```
///
/// Run as root, the cluster's programs run as the `postgres` user (`initdb` refuses root), in a
/// directory it owns; run as anyone else, as that user. The fault tests and the bench reuse it
/// (`restart()`, `psql(_:database:)`), and `bench/pg-cluster.sh` does the same from a shell.
public final class ThrowawayPostgres: Sendable {
    /// The temporary directory: the data directory (`data/`), the server's log (`server.log`)
    /// and its socket (`.s.PGSQL.5432`).
    public let directory: String
    /// Where `initdb`, `pg_ctl`, `postgres` and `psql` are.
    public let binaries: String
    private let counter = Mutex(0)
    private let stopped = Mutex(false)

    /// A role that logs in with a password (`right-password`) over the socket, for tests of
    /// wrong credentials; every other role is trusted.
    public static let passwordRole = "jobrunner_password"
    public static let password = "right-password"
    /// The database every test's database is copied from.
    public static let template = "jobrunner_template"

    // MARK: Finding the programs

    /// Where PostgreSQL 15's server programs are: `$JOBRUNNER_PG_BIN`, else Debian's place.
    public static var binaryDirectory: String {
        if let path = ProcessInfo.processInfo.environment["JOBRUNNER_PG_BIN"], !path.isEmpty { return path }
        return "/usr/lib/postgresql/15/bin"
    }

    /// Why no cluster can be started here (the server programs are absent), or nil when one can.
    public static var unavailable: String? {
        for program in ["initdb", "pg_ctl", "postgres", "psql"]
        where !FileManager.default.isExecutableFile(atPath: binaryDirectory + "/" + program) {
            return
                "PostgreSQL 15's \(program) is not in \(binaryDirectory) (install postgresql-15, as `make test` does, or set JOBRUNNER_PG_BIN)"
        }
        return nil
    }

    /// The comment a skipped test shows.
    public static var skipComment: Comment {
        Comment(rawValue: "skipped: " + (unavailable ?? "PostgreSQL is available"))
    }

    // MARK: The one cluster of a test process

    private static let sharedCluster = Mutex<Task<ThrowawayPostgres, any Error>?>(nil)
    private static let started = Mutex<ThrowawayPostgres?>(nil)

    /// The cluster of this process, started by the first caller and stopped when the process
    /// exits.
    public static func shared() async throws -> ThrowawayPostgres {
        let task = sharedCluster.withLock { task in
            if let task { return task }
            let made = Task { () throws -> ThrowawayPostgres in
                let cluster = try await ThrowawayPostgres()
                started.withLock { $0 = cluster }
                atexit { ThrowawayPostgres.started.withLock { $0 }?.stop() }
                return cluster
            }
            task = made
            return made
        }
        return try await task.value
    }

    // MARK: Starting and stopping

    /// Makes the directory, runs `initdb` and starts the server.
    /// - Throws: ``Failure`` with the program's output when one fails.
    public init() async throws {
        if let reason = Self.unavailable { throw Failure(reason) }
        binaries = Self.binaryDirectory
        let base =
            FileManager.default.temporaryDirectory.path + "/jobrunner-pg-\(UUID().uuidString.prefix(8))"
        directory = base
        try FileManager.default.createDirectory(
            atPath: base, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if Self.runsAsPostgres {
            try await Self.run("/bin/chown", ["postgres:postgres", base], asPostgres: false)
        }
        try await Self.run(
            binaries + "/initdb",
            ["-D", base + "/data", "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"],
            in: base)
        // Every role is trusted on the socket, but the one kept for tests of wrong credentials.
        let hba = """
            local all \(Self.passwordRole) scram-sha-256
            local all all trust

            """
        try Data(hba.utf8).write(to: URL(fileURLWithPath: base + "/data/pg_hba.conf"))
        if Self.runsAsPostgres {
            try await Self.run(
                "/bin/chown", ["postgres:postgres", base + "/data/pg_hba.conf"], asPostgres: false)
        }
        try await start()
        do {
            try await psql(
                "CREATE ROLE \(Self.passwordRole) LOGIN PASSWORD '\(Self.password)'", database: "postgres")
            try await psql("CREATE DATABASE \(Self.template)", database: "postgres")
        } catch {
            stop()
            throw error
        }
    }

    /// Whether the cluster's programs run as the `postgres` user (this process is root's).
    static var runsAsPostgres: Bool { geteuid() == 0 }

    /// Starts the server on the data directory, waiting until it takes connections.
    public func start() async throws {
        try await Self.run(
            binaries + "/pg_ctl",
            [
                "-D", directory + "/data", "-l", directory + "/server.log", "-w", "-t", "120", "-o",
                "-c listen_addresses='' -k \(directory) -p 5432 -c fsync=off -c full_page_writes=off -c max_connections=200",
                "start",
            ], in: directory)
    }

    /// Stops the server at once (`-m immediate`) and removes the directory; later calls do
    /// nothing.
    public func stop() {
        let first = stopped.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        _ = try? Self.runBlocking(
            binaries + "/pg_ctl", ["-D", directory + "/data", "-m", "immediate", "-w", "stop"], in: directory)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Restarts the server (`pg_ctl restart -m fast`), as the fault tests do mid-run.
    public func restart() async throws {
        try await Self.run(
            binaries + "/pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "-t", "120", "restart"],
            in: directory)
    }

    // MARK: Databases

    /// Makes a new, empty database from the template, and returns its URL.
    public func makeDatabase(template: String = ThrowawayPostgres.template) async throws -> String {
        let number = counter.withLock { count in
            count += 1
            return count
        }
        let name = "test_\(getpid())_\(number)"
        try await psql("CREATE DATABASE \(name) TEMPLATE \(template);", database: "postgres")
        return url(database: name)
    }

    /// The URL of a database on this cluster's socket, as `--store` takes it.
    public func url(database: String, user: String = "postgres", password: String? = nil) -> String {
        let credentials = password.map { "\(user):\($0)" } ?? user
        return "postgres://\(credentials)@/\(database)?host=\(directory)"
    }

    /// Runs SQL with `psql` as the superuser and returns what it printed (unaligned, tuples only).
    @discardableResult
    public func psql(_ sql: String, database: String) async throws -> String {
        try await Self.run(
            binaries + "/psql",
            [
                "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", directory, "-p", "5432", "-U",
                "postgres",
                "-d", database, "-c", sql,
            ], asPostgres: false, in: directory)
    }

    // MARK: Running programs

    /// A program of the cluster that failed, with what it printed.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Runs a program to its end (as `postgres` when this process is root's, unless told not
    /// to) and returns its output; throws with the output when it exits non-zero. It waits on
    /// a thread of its own: `initdb` or `CREATE DATABASE` on a loaded machine take seconds, and
    /// a wait on one of the few threads of Swift's cooperative pool would hold up every other
    /// test of the process (the store contracts ran out of their time limits so).
    @discardableResult
    static func run(
        _ program: String, _ arguments: [String], asPostgres: Bool = true, in directory: String? = nil
    ) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        try runBlocking(program, arguments, asPostgres: asPostgres, in: directory)
                    })
            }.start()
        }
    }

    /// ``run(_:_:asPostgres:in:)`` on the calling thread (for `stop()`, at the process's exit).
    @discardableResult
    static func runBlocking(
        _ program: String, _ arguments: [String], asPostgres: Bool = true, in directory: String? = nil
    ) throws -> String {
        let command =
            (asPostgres && runsAsPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : []) + [program]
            + arguments
        // Output goes to a file, not a pipe: the server that `pg_ctl start` leaves running
        // would keep a pipe open. The child is reaped with waitpid on this thread (Foundation's
        // Process waited for a reap that never came here). It gets standard input, output and
        // error and no other descriptor (`jobrunner_spawn`): the server would otherwise keep
        // every descriptor the test process had open at that moment, such as the pipes of other
        // tests' children, which then never saw their end (a test of `logs` into a closed pipe
        // waited forever on one).
        let outputPath =
            FileManager.default.temporaryDirectory.path + "/jobrunner-pg-output-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let input = open("/dev/null", O_RDONLY | O_CLOEXEC)
        let output = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer {
            if input >= 0 { close(input) }
            if output >= 0 { close(output) }
        }
        guard input >= 0, output >= 0 else {
            throw Failure("cannot open the output of \(program): \(String(cString: strerror(errno)))")
        }
        let envp = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        let cArguments = command.map { strdup($0) } + [nil]
        let cEnvironment = envp.map { strdup($0) } + [nil]
        defer { (cArguments + cEnvironment).forEach { free($0) } }
        var pid: pid_t = 0
        var pidfd: Int32 = -1
        let spawned = jobrunner_spawn(
            command[0], cArguments, cEnvironment, directory ?? "/", input, output, output, &pid, &pidfd)
        guard spawned == 0 else {
            throw Failure("cannot start \(program): \(String(cString: strerror(spawned)))")
        }
        defer { if pidfd >= 0 { close(pidfd) } }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        guard exitStatus == 0 else {
            throw Failure(
                "\((program as NSString).lastPathComponent) \(arguments.joined(separator: " ")) exited \(exitStatus): \(text)"
            )
        }
        return text
    }
}
