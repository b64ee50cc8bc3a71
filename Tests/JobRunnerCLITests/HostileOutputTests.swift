import Foundation
import Glibc
import Testing

/// Answers that must not mislead, and text from jobs that must not drive the terminal
/// (issue 11, item 12).
@Suite struct HostileOutputTests {
    static let jobs = "jobs:\n  a:\n    run: echo hi\n"

    // MARK: State paths that cannot be used

    @Test func statusSaysWhyAStatePathCannotBeUsedAndExitsThree() async throws {
        let file = try Workspace(files: ["a.yaml": Self.jobs])
        try "x".write(toFile: file.state, atomically: true, encoding: .utf8)
        for command in ["status", "runs", "logs", "prune"] {
            let arguments = command == "logs" ? ["logs", "a"] : [command]
            let result = try await file.run(arguments, environment: [:])
            #expect(result.status == 3, "\(command): \(result)")
            #expect(
                result.stderr.contains("the state path \(file.state) is a file, not a directory"), "\(result)"
            )
            #expect(!result.stdout.contains("no runs yet"))
        }

        let database = try Workspace(files: ["a.yaml": Self.jobs])
        try FileManager.default.createDirectory(atPath: database.state, withIntermediateDirectories: true)
        try "x".write(toFile: database.state + "/db", atomically: true, encoding: .utf8)
        let status = try await database.run("status")
        #expect(status.status == 3)
        #expect(status.stderr.contains("/db, where the state database belongs, is a file, not a directory"))
    }

    @Test func runSaysThatLogsIsAFile() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.jobs])
        try FileManager.default.createDirectory(atPath: workspace.state, withIntermediateDirectories: true)
        try "x".write(toFile: workspace.state + "/logs", atomically: true, encoding: .utf8)
        let run = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(run.status == 3)
        #expect(
            run.stderr.contains("/logs, where the attempt logs belong, is a file, not a directory"), "\(run)")
        #expect(!run.stderr.contains("cannot create the state directory"))
    }

    /// A state path that cannot be made says why in the system's words, not Foundation's "The
    /// operation could not be completed".
    @Test func aStatePathThatCannotBeMadeSaysWhy() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.jobs])
        try FileManager.default.createSymbolicLink(
            atPath: workspace.state, withDestinationPath: "/nonexistent/state")
        let run = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(run.status == 3)
        #expect(
            run.stderr.contains("it is a symbolic link to /nonexistent/state, which does not exist"), "\(run)"
        )
        #expect(!run.stderr.contains("could not be completed"))
    }

    /// An unreadable state directory is not "no runs yet". Root reads every directory, so as
    /// root the check runs as `nobody` through setpriv.
    @Test func statusOnAnUnreadableStateDirectoryExitsThree() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.jobs])
        try FileManager.default.createDirectory(
            atPath: workspace.state + "/db", withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: workspace.root)
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: workspace.state)
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: workspace.state)
        }
        var arguments = [jobrunnerBinary, "status", "--state", workspace.state]
        if getuid() == 0 {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return }
            arguments = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + arguments
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let ended = await finished(process, stdout: out, stderr: err)
        let stderr = ended.stderr
        #expect(ended.status == 3, "\(ended.stdout)\(stderr)")
        #expect(
            stderr.contains("cannot read the directory \(workspace.state): Permission denied"), "\(stderr)")
    }

    // MARK: Escape sequences written by jobs

    /// Ids the loader allows that look like the runner's own files in a run's log folder: each
    /// job keeps its outputs and its log (`a.1.output` was job `a`'s output file; a job
    /// `.constraints` shared the folder of the constraints' `satisfy` output).
    @Test func idsThatLookLikeTheRunnersOwnFilesKeepTheirOwnOutputsAndLogs() async throws {
        let workspace = try Workspace(files: [
            "a.yaml": """
            constraints:
              "1": { check: test -f ../never, satisfy: echo satisfied }
            jobs:
              a.1.output: { run: echo first }
              a: { run: 'echo v=1 >> "$JOBRUNNER_OUTPUT"', needs: [a.1.output] }
              c: { run: echo "got $JOBRUNNER_OUT_A_V", needs: [a] }
              .constraints: { run: echo mine }
              b: { run: echo b, constraints: ["1"], allowFailure: true }
            """
        ])
        _ = try await workspace.run("run", "jobs", "--progress", "none")
        #expect(try await workspace.run("logs", "c").stdout == "got 1\n", "a's outputs reached c")
        #expect(try await workspace.run("logs", "a.1.output").stdout == "first\n")
        let own = try await workspace.run("logs", ".constraints")
        #expect(own.stdout == "mine\n", "\(own)")
    }

    @Test func escapeSequencesFromJobsNeverReachTheTerminalRaw() async throws {
        let title = "\\033]0;TITLE\\007\\033[2J"
        let workspace = try Workspace(files: [
            "a.yaml": """
            jobs:
              bad-output:
                run: printf '\(title)\\n' >> "$JOBRUNNER_OUTPUT"
              skipper:
                run: printf 'skip=\(title)\\n' >> "$JOBRUNNER_CONTROL"

            """
        ])
        let run = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(run.status == 1, "\(run)")
        let status = try await workspace.run("status")
        for (what, text) in [("run", run.stdout + run.stderr), ("status", status.stdout + status.stderr)] {
            #expect(!text.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{7}" }, "\(what): \(text)")
            #expect(text.contains("\\x1B]0;TITLE\\x07\\x1B[2J"), "\(what): \(text)")
        }
    }
}
