// `stat` and `timespec`: with SwiftNIO in the build (the dashboard), their definitions are found in
// CDispatch's module, which MemberImportVisibility then asks to be imported.
import CDispatch
import Foundation
import Glibc
import Testing

/// `status`, `runs` and `logs` read a state directory they cannot write: an archived one on
/// read-only media, or one whose files the user may only read. They open the database
/// read-only and change nothing.
@Suite(.enabled(if: getuid() == 0, "mounts and changes users"))
struct ReadOnlyStateTests {
    static let job = "jobs:\n  j:\n    run: echo hello\n"

    /// Runs `command` (a path and its arguments), as the user `uid` when given.
    func run(_ command: [String], as uid: Int? = nil) async throws -> Finished {
        let process = Process()
        let prefix =
            uid.map { ["/usr/bin/setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups"] } ?? []
        let whole = prefix + command
        process.executableURL = URL(fileURLWithPath: whole[0])
        process.arguments = Array(whole.dropFirst())
        var environment = ProcessInfo.processInfo.environment
        environment["JOBRUNNER_STATE"] = nil
        process.environment = environment
        return try await runCollecting(process)
    }

    /// Gives every file of `state` to `uid`, which may only read them; returns their paths
    /// under `state`.
    static func handOver(_ state: String, to uid: Int) -> [String] {
        let files = FileManager.default.enumerator(atPath: state)?.allObjects as? [String] ?? []
        for path in [state] + files.map({ state + "/" + $0 }) {
            var info = stat()
            #expect(stat(path, &info) == 0)
            #expect(chown(path, uid_t(uid), gid_t(uid)) == 0)
            #expect(chmod(path, info.st_mode & S_IFMT == S_IFDIR ? 0o500 : 0o400) == 0)
        }
        return files
    }

    /// The read-only commands on `state`, each expected to succeed.
    func expectReadable(_ state: String, as uid: Int? = nil) async throws {
        let status = try await run([jobrunnerBinary, "status", "--state", state], as: uid)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("succeeded"), "\(status.stdout)")
        let json = try await run([jobrunnerBinary, "status", "--json", "--state", state], as: uid)
        #expect(json.status == 0 && json.stdout.contains("\"succeeded\""), "\(json.stderr)")
        let runs = try await run([jobrunnerBinary, "runs", "--state", state], as: uid)
        #expect(runs.status == 0 && runs.stdout.contains("succeeded"), "\(runs.stdout)\(runs.stderr)")
        let logs = try await run([jobrunnerBinary, "logs", "j", "--state", state], as: uid)
        #expect(logs.status == 0 && logs.stdout == "hello\n", "\(logs.stdout)\(logs.stderr)")
    }

    @Test func aStateDirectoryOnAReadOnlyMountIsRead() async throws {
        let workspace = try Workspace(files: ["j.yaml": Self.job])
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 0)
        let mounted = workspace.root + "/archive"
        try FileManager.default.createDirectory(atPath: mounted, withIntermediateDirectories: false)
        let bind = try await run(["/bin/mount", "--bind", workspace.state, mounted])
        try #require(bind.status == 0, "\(bind.stderr)")
        defer {
            let unmount = try? Process.run(URL(fileURLWithPath: "/bin/umount"), arguments: [mounted])
            unmount?.waitUntilExit()
        }
        let remount = try await run(["/bin/mount", "-o", "remount,bind,ro", mounted])
        try #require(remount.status == 0, "\(remount.stderr)")
        try await expectReadable(mounted)
        // A command that writes says why it cannot.
        let retry = try await run([jobrunnerBinary, "retry", "j", "--state", mounted])
        #expect(retry.status != 0)
    }

    /// A user who may read but not write the files reads them without LMDB's lock file, unless
    /// a runner holds the state directory: then it says so rather than read pages being reused.
    @Test func aStateDirectoryTheUserMayOnlyReadIsRead() async throws {
        let workspace = try Workspace(files: ["j.yaml": Self.job])
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 0)
        let nobody = 65534
        let files = Self.handOver(workspace.state, to: nobody)
        try await expectReadable(workspace.state, as: nobody)
        let before = FileManager.default.enumerator(atPath: workspace.state)?.allObjects as? [String] ?? []
        #expect(before.sorted() == files.sorted(), "nothing is created")

        // A runner's lock on the directory.
        let fd = open(workspace.state, O_RDONLY | O_DIRECTORY)
        #expect(fd >= 0 && flock(fd, LOCK_EX) == 0)
        defer { close(fd) }
        let status = try await run([jobrunnerBinary, "status", "--state", workspace.state], as: nobody)
        #expect(status.status == 3)
        #expect(status.stderr.contains("while its runner"), "\(status.stderr)")
    }

    /// `wait` goes on reading: a runner that starts while it reads without LMDB's lock file
    /// ends its wait with the same sentence, rather than leave it reading pages being reused.
    @Test func aWaitWithoutTheLockFileEndsWhenARunnerStarts() async throws {
        let workspace = try Workspace(files: ["j.yaml": "jobs:\n  j:\n    run: exit 1\n"])
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 1)
        // Reopened with no runner: unfinished, so `wait` waits.
        #expect(try await workspace.run("retry", "j").status == 0)
        let nobody = 65534
        _ = Self.handOver(workspace.state, to: nobody)
        let wait = Process()
        wait.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        wait.arguments = [
            "--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups", jobrunnerBinary, "wait", "--state",
            workspace.state,
        ]
        let err = Pipe()
        wait.standardError = err
        wait.standardOutput = Pipe()
        try wait.run()
        defer { if wait.isRunning { kill(wait.processIdentifier, SIGKILL) } }
        let lines = LineReader(err)
        #expect(await lines.waitFor("no runner works on it; waiting"), "\(lines.all)")
        // A runner's lock on the directory.
        let fd = open(workspace.state, O_RDONLY | O_DIRECTORY)
        #expect(fd >= 0 && flock(fd, LOCK_EX) == 0)
        defer { close(fd) }
        // Without the check it would wait on for ever: at most a minute here.
        #expect(await ExitWatcher(wait).wait() == 3)
        #expect(lines.all.contains { $0.contains("while its runner") }, "\(lines.all)")
    }
}
