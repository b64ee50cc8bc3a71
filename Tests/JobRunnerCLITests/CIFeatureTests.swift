import Foundation
import Testing

/// Issue 12, as a new user reproduces it on the built binary: the failure tail and summary,
/// `allowFailure` and `when`, `--only`, `retry` of several jobs, `wait`, and the small things.
@Suite(.serialized) struct CIFeatureTests {
    static let failing = """
        jobs:
          unit-test:
            run: for i in $(seq 1 25); do echo "assertion line $i"; done; exit 1
          deploy:
            needs: [unit-test]
            run: echo deploying
        """

    @Test func aFailedAttemptShowsTheEndOfItsLogAndTheSummaryPointsAtIt() async throws {
        let workspace = try Workspace(files: ["ci.yaml": Self.failing])
        let run = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(run.status == 1)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let failed = try #require(
            lines.firstIndex { $0.hasSuffix("failed      unit-test (attempt 1): exit:1") })
        #expect(lines[failed + 1] == "    │ assertion line 6", "the last 20 lines, under the failed line")
        #expect(lines[failed + 20] == "    │ assertion line 25")
        #expect(!run.stdout.contains("assertion line 5\n"))
        #expect(run.stdout.contains("1 failed, 1 blocked"))
        #expect(
            lines.contains(
                "  unit-test failed: exit:1  (see: jobrunner logs unit-test --state \(workspace.state))"))
        #expect(
            lines.contains(
                "  deploy blocked: needs:unit-test  (see: jobrunner logs unit-test --state \(workspace.state))"
            ),
            "a blocked job points at the log of the job that blocked it")
    }

    @Test func theBoardShowsTheEndsOfFailedLogsWhenTheRunEndsAndMarksSkippedJobsApart() async throws {
        let workspace = try Workspace(files: [
            "ci.yaml": Self.failing
                + "\n  notify:\n    needs: [deploy]\n    when: failure\n    run: echo notified\n"
                + "  off:\n    enabled: false\n    run: echo\n"
        ])
        let run = try await workspace.run("run", "jobs", "--progress", "tty")
        #expect(run.status == 1)
        #expect(run.stdout.contains("○ off skipped: disabled"))
        #expect(!run.stdout.contains("✓ off"))
        #expect(run.stdout.contains("✗ unit-test (attempt 1), its log's end:\n    │ assertion line 6\n"))
        #expect(run.stdout.contains("    │ assertion line 25\n"))
    }

    static let optional = """
        jobs:
          lint:
            run: echo "style nits"; exit 3
            allowFailure: true
          test:
            needs: [lint]
            run: test ! -f fail-tests
          notify:
            needs: [test]
            when: failure
            run: echo "tests failed" > notified
          cleanup:
            needs: [test]
            when: always
            run: echo cleaned > cleaned
        """

    @Test func anAllowedFailureDoesNotFailTheRunAndAWhenFailureJobIsSkippedWithItsReason() async throws {
        let workspace = try Workspace(files: ["ci.yaml": Self.optional])
        let run = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("succeeded in"))
        #expect(run.stdout.contains("2 succeeded, 1 skipped, 1 failed (allowed)"))
        #expect(run.stdout.contains("  lint failed (allowed): exit:3"))
        #expect(run.stdout.contains("skipped     notify: when: failure, and no need failed"))
        #expect(workspace.read("jobs/cleaned") == "cleaned\n")
        #expect(workspace.read("jobs/notified").isEmpty)
        let status = try await workspace.run("status").stdout
        #expect(status.contains("failed (allowed): exit:3 (1 attempt)"))
        let jobs = try await workspace.statusJobs()
        #expect(jobs["notify"]?["state"] as? String == "skipped")
        #expect(jobs["notify"]?["reason"] as? String == "when: failure, and no need failed")
    }

    @Test func aWhenFailureJobRunsWhenANeedFailsAndTheRunStillFails() async throws {
        let workspace = try Workspace(files: ["ci.yaml": Self.optional])
        try "".write(toFile: workspace.root + "/jobs/fail-tests", atomically: true, encoding: .utf8)
        let run = try await workspace.run("run", "jobs", "--progress", "none")
        #expect(run.status == 1)
        #expect(workspace.read("jobs/notified") == "tests failed\n")
        #expect(workspace.read("jobs/cleaned") == "cleaned\n")
    }

    @Test func aBadWhenIsAValidationErrorAtItsLine() async throws {
        let workspace = try Workspace(files: [
            "a.yaml": "jobs:\n  a:\n    run: echo\n    when: sometimes\n    allowFailure: maybe\n"
                + "  tick:\n    every: 1h\n    run: echo\n    when: always\n"
        ])
        let result = try await workspace.run("validate", workspace.jobs)
        #expect(result.status == 2)
        #expect(
            result.stderr.contains(
                "a.yaml:4:11: error: when must be one of success, failure, always, not 'sometimes'"))
        #expect(result.stderr.contains("a.yaml:5:19: error: allowFailure"))
        #expect(
            result.stderr.contains(
                "a.yaml:9:11: error: when: always applies to one-shot jobs; job 'tick' is periodic"))
    }

    static let graph = """
        jobs:
          gather:
            run: echo gathered
          report:
            needs: [gather]
            run: echo reported
          unrelated:
            run: echo unrelated
        """

    @Test func runOnlyRunsTheJobsNamedAndWhatTheyNeed() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.graph])
        let run = try await workspace.run("run", "jobs", "--progress", "none", "--only", "report")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("2 succeeded"))
        let jobs = try await workspace.statusJobs()
        #expect(Set(jobs.keys) == ["gather", "report"])

        let unknown = try await workspace.run("run", "jobs", "--only", "reprot")
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("jobrunner: --only: no job 'reprot'; did you mean 'report'?"))
    }

    /// The events file carries job ids, reasons and messages: owner only, like the state
    /// directory (it was created 0644; issue 26, item 15).
    @Test func theEventsFileIsTheOwnersOnly() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.graph])
        let events = workspace.root + "/events.jsonl"
        let run = try await workspace.run("run", "jobs", "--progress", "none", "--events", events)
        #expect(run.status == 0, "\(run.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: events)
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600, "mode \(String(mode ?? -1, radix: 8))")
    }

    /// `--only ,` ran every job (issue 26, item 15): a list that names no job is refused.
    @Test func runOnlyWithNoJobNamedIsRefusedAndRunsNothing() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.graph])
        for empty in [",", "", ",,"] {
            let run = try await workspace.run("run", "jobs", "--progress", "none", "--only", empty)
            #expect(run.status == 2, "\(empty): \(run.stdout) \(run.stderr)")
            #expect(run.stderr.contains("--only names no job"), "\(run.stderr)")
        }
        let status = try await workspace.run("status", "--json")
        #expect(!status.stdout.contains("unrelated"), "nothing was run: \(status.stdout)")
    }

    static let flaky = """
        pipelines:
          ci: {}
        jobs:
          a:
            pipeline: ci
            run: test -f ../fixed
          b:
            pipeline: ci
            run: test -f ../fixed
          c:
            pipeline: ci
            needs: [a]
            run: echo c
        """

    @Test func retryTakesSeveralJobsOrEveryFailedOne() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.flaky])
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 1)
        let none = try await workspace.run("retry")
        #expect(none.status == 2)
        #expect(none.stderr.contains("name the jobs to retry, or pass --failed"))
        let several = try await workspace.run("retry", "a", "b")
        #expect(several.status == 0, "\(several.stderr)")
        #expect(several.stdout.contains("a gets another chance"))
        #expect(several.stdout.contains("b gets another chance"))
        let status = try await workspace.run("status").stdout
        #expect(!status.contains("waiting for a slot"), "a stopped run waits for no slot:\n\(status)")
        #expect(status.contains("pending; runs at the next `jobrunner run`"))
        #expect(!status.contains("default 0/4"), "the default pipeline is shown only when used")
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 1)

        try "".write(toFile: workspace.root + "/fixed", atomically: true, encoding: .utf8)
        let failed = try await workspace.run("retry", "--failed")
        #expect(failed.status == 0, "\(failed.stderr)")
        #expect(failed.stdout.contains("a gets another chance"))
        #expect(failed.stdout.contains("b gets another chance"))
        let again = try await workspace.run("run", "jobs", "--progress", "none")
        #expect(again.status == 0, "\(again.stdout)")
        #expect(again.stdout.contains("3 succeeded"))
    }

    @Test func waitBlocksUntilARunStartedElsewhereEndsAndExitsAsItDid() async throws {
        let workspace = try Workspace(files: [
            "a.yaml":
                "jobs:\n  slow:\n    run: while [ ! -f ../go ] && [ -d ../jobs ]; do sleep 0.05; done; exit 3\n"
        ])
        let output = Pipe()
        let runner = try workspace.start(["run", "jobs", "--progress", "plain"], stdout: output)
        let lines = LineReader(output)
        #expect(await lines.waitFor("started     slow"))
        let waiter = try workspace.start(["wait"])
        let waited = ExitWatcher(waiter)
        try "".write(toFile: workspace.root + "/go", atomically: true, encoding: .utf8)
        #expect(await waited.wait() == 1, "wait exits as the failed run does")
        #expect(await waitForExit(runner) == 1)

        let timedOut = try await workspace.run("wait", "--run", "nope")
        #expect(timedOut.status == 1)
        #expect(timedOut.stderr.contains("no run 'nope'"))
    }

    /// Runs the binary with exactly these arguments (no `--state` added).
    private static func jobrunner(_ arguments: [String]) async throws -> (status: Int32, stdout: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: jobrunnerBinary)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let ended = await finished(process, stdout: out)
        return (ended.status, ended.stdout)
    }

    @Test func smallThings() async throws {
        let workspace = try Workspace(files: [
            "a.yaml":
                "jobs:\n  t:\n    run: test \"$JOBRUNNER_ATTEMPT\" -ge 2\n    retry: { attempts: 2, delay: 1050ms, jitter: 0 }\n"
        ])
        let validate = try await workspace.run("validate", workspace.jobs)
        #expect(validate.stdout == "1 job in 1 file is valid\n")
        let version = try await Self.jobrunner(["version"])
        #expect(version.status == 0)
        #expect(version.stdout.first?.isNumber == true)
        #expect(try await Self.jobrunner(["--version"]).stdout == version.stdout)

        let events = try await workspace.run("run", "jobs", "--events", "/nonexistent/x")
        #expect(events.status == 2)
        #expect(events.stderr.hasPrefix("jobrunner: cannot open the events file /nonexistent/x"))
        #expect(!events.stderr.contains("USAGE"))

        let run = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(run.status == 0)
        #expect(run.stdout.contains("retrying    t in 1.05s"), "\(run.stdout)")

        // Beside the built binary, without the tests' plugin directory: the example plugins
        // alone, none of the tests' (they were built as products beside it, and the malformed
        // ones were listed as not loadable).
        let plugins = try await workspace.run(
            ["plugins", "jobs"], environment: ["JOBRUNNER_PLUGIN_PATH": ""])
        let pluginLines = plugins.stdout.split(separator: "\n").map(String.init)
        #expect(pluginLines.contains { $0.hasPrefix("noop ") }, "the example plugins are listed")
        #expect(
            Set(pluginLines.filter { $0.hasSuffix(".so") }.map { String($0.prefix { $0 != " " }) })
                == ["files", "hello", "noop"], "\(plugins.stdout)")
        #expect(!plugins.stdout.contains("not loadable"), "\(plugins.stdout)")

        let usage = try await workspace.run("retyr")
        #expect(usage.status == 2)
        #expect(usage.stderr.hasPrefix("jobrunner: "), "one error prefix: \(usage.stderr)")
    }
}
