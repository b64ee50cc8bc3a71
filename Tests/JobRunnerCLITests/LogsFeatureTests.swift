import Foundation
import Glibc
import Testing

/// `logs` always says something (issue 12, item 7), and pipeline names are checked (item 8).
@Suite(.serialized) struct LogsFeatureTests {
    @Test func aJobThatFailedOnItsConstraintShowsTheSatisfyOutput() async throws {
        let workspace = try Workspace(files: [
            "a.yaml": """
            constraints:
              token:
                check: "false"
                satisfy: echo "the token server said no"; exit 1
            jobs:
              fetch:
                constraints: [token]
                run: echo fetched
            """
        ])
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 1)
        let logs = try await workspace.run("logs", "fetch")
        #expect(logs.status == 0)
        #expect(logs.stdout == "the token server said no\n")
        #expect(
            logs.stderr.contains(
                "constraint token failed: the token server said no; the output of the constraint's last satisfy in this run"))
    }

    @Test func logsStillShowAfterTheStateDirectoryIsMovedAndAJobWithNoLogSaysWhy() async throws {
        let workspace = try Workspace(files: [
            "a.yaml":
                "jobs:\n  build:\n    run: echo built\n  quiet:\n    run: \"true\"\n  off:\n    enabled: false\n    run: echo\n"
        ])
        // Run with another state directory, then move it where the workspace looks.
        let original = workspace.root + "/original"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: jobrunnerBinary)
        process.arguments = ["run", "jobs", "--progress", "none", "--state", original]
        process.currentDirectoryURL = URL(fileURLWithPath: workspace.root)
        try process.run()
        await onOwnThread { process.waitUntilExit() }
        #expect(process.terminationStatus == 0)
        try FileManager.default.moveItem(atPath: original, toPath: workspace.state)
        let logs = try await workspace.run("logs", "build")
        #expect(logs.stdout == "built\n", "\(logs.stderr)")
        let quiet = try await workspace.run("logs", "quiet")
        #expect(quiet.status == 0)
        #expect(quiet.stderr.contains("attempt 1 of quiet wrote no output; it ended succeeded"))
        let off = try await workspace.run("logs", "off")
        #expect(off.status == 1)
        #expect(off.stderr.contains("job 'off' is skipped (disabled) and never started: it has no log"))

        let all = try await workspace.run("logs")
        #expect(all.stdout == "build | built\n")
    }

    static let gated = """
        jobs:
          first:
            run: while [ ! -f ../go ] && [ -d ../jobs ]; do sleep 0.05; done; echo first done
          second:
            needs: [first]
            run: echo second says hello
        """

    /// Values no command can act on are usage errors (exit 2) that say what to give instead.
    @Test func anAttemptBelowOneAndAZeroAgeAreUsageErrors() async throws {
        let workspace = try Workspace(files: ["a.yaml": "jobs:\n  a: { run: echo a }\n"])
        let logs = try await workspace.run("logs", "a", "--attempt", "0")
        #expect(logs.status == 2, "\(logs)")
        #expect(logs.stderr.contains("--attempt counts from 1, not 0"), "\(logs.stderr)")
        let prune = try await workspace.run("prune", "--older-than", "0s")
        #expect(prune.status == 2, "\(prune)")
        #expect(prune.stderr.contains("--older-than must be longer than 0s"), "\(prune.stderr)")
        #expect(prune.stderr.contains("use --keep N"))
    }

    @Test func followingAJobThatHasNotStartedWaitsForIt() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.gated])
        let output = Pipe()
        let runner = try workspace.start(["run", "jobs", "--progress", "plain"], stdout: output)
        let lines = LineReader(output)
        #expect(await lines.waitFor("started     first"))
        let followOut = Pipe()
        let follower = try workspace.start(["logs", "-f", "second"], stdout: followOut)
        let followed = LineReader(followOut)
        let wholeOut = Pipe()
        let whole = try workspace.start(["logs", "-f"], stdout: wholeOut)
        let wholeLines = LineReader(wholeOut)
        try "".write(toFile: workspace.root + "/go", atomically: true, encoding: .utf8)
        #expect(await waitForExit(follower) == 0)
        #expect(followed.all == ["second says hello"])
        #expect(await waitForExit(runner) == 0)
        #expect(await waitForExit(whole) == 0)
        #expect(wholeLines.all == ["first  | first done", "second | second says hello"])
    }

    @Test func followingEndsWithAMessageWhenTheRunnerIsGone() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.gated])
        let output = Pipe()
        let runner = try workspace.start(["run", "jobs", "--progress", "plain"], stdout: output)
        let lines = LineReader(output)
        #expect(await lines.waitFor("started     first"))
        let errors = Pipe()
        let follower = try workspace.start(["logs", "-f", "first"], stderr: errors)
        let said = LineReader(errors)
        kill(runner.processIdentifier, SIGKILL)
        _ = await waitForExit(runner)
        #expect(await waitForExit(follower) == 1)
        // Awaited: the follower's exit can be seen before the reader's thread has read its
        // last line from the pipe.
        #expect(await said.waitFor("the runner that wrote this log is gone"), "\(said.all)")
        // The orphaned job ends once it may.
        try "".write(toFile: workspace.root + "/go", atomically: true, encoding: .utf8)
    }

    @Test func suspendChecksThePipelineName() async throws {
        let workspace = try Workspace(files: [
            "a.yaml": "pipelines:\n  ci: {}\njobs:\n  a:\n    pipeline: ci\n    run: echo\n"
        ])
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 0)
        let typo = try await workspace.run("suspend", "cii")
        #expect(typo.status == 2)
        #expect(typo.stderr.contains("jobrunner: no pipeline 'cii'; did you mean 'ci'?"))
        #expect(try await workspace.run("suspend", "ci").status == 0)
        let resumeTypo = try await workspace.run("resume", "cj")
        #expect(resumeTypo.status == 2)
        #expect(try await workspace.run("resume", "ci").status == 0)
    }

    @Test func aRunHeldBackBySuspensionSaysSoUntilResumed() async throws {
        let workspace = try Workspace(files: [
            "a.yaml": "pipelines:\n  ci: {}\njobs:\n  a:\n    pipeline: ci\n    run: echo\n"
        ])
        let suspend = try await workspace.run("suspend", "ci")
        #expect(suspend.status == 0, "before the first run any name is accepted")
        let output = Pipe()
        let runner = try workspace.start(["run", "jobs", "--progress", "plain"], stdout: output)
        let lines = LineReader(output)
        #expect(
            await lines.waitFor(
                "waiting     pipeline ci is suspended and nothing else can run; `jobrunner resume ci` lets it go on"
            ))
        #expect(try await workspace.run("resume", "ci").status == 0)
        #expect(await waitForExit(runner) == 0)
        #expect(lines.all.contains { $0.hasSuffix("resumed     ci") })
    }
}
