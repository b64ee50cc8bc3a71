import Foundation
import Glibc
import Testing

@Suite(.serialized) struct EndToEndTests {
    static let pipeline = """
        pipelines:
          ci: { maxConcurrent: 2 }
        jobs:
          prepare:
            pipeline: ci
            run: echo "prepared"; echo "version=2.1" >> "$JOBRUNNER_OUTPUT"
          build:
            pipeline: ci
            needs: [prepare]
            run: echo "building $JOBRUNNER_OUT_PREPARE_VERSION"
          test:
            pipeline: ci
            needs: [build]
            run: test "$JOBRUNNER_ATTEMPT" -ge 2
            retry: { attempts: 3, delay: 50ms }
        """

    @Test func runPrintsTransitionsStoresStateAndExitsZero() async throws {
        let workspace = try Workspace(files: ["ci.yaml": Self.pipeline])
        let run = try await workspace.run("run", "jobs", "--progress", "plain", "--events", "events.jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("started     prepare (attempt 1)"))
        #expect(run.stdout.contains("retrying    test in "))
        #expect(run.stdout.contains("succeeded in"))

        let status = try await statusJSON(workspace.run("status", "--json").stdout)
        let runObject = try #require(status["run"] as? [String: Any])
        #expect(runObject["state"] as? String == "succeeded")
        let jobs = try #require(status["jobs"] as? [[String: Any]])
        #expect(Set(jobs.map { $0["id"] as? String ?? "" }) == ["prepare", "build", "test"])
        let test = try #require(jobs.first { $0["id"] as? String == "test" })
        #expect(test["attempts"] as? Int == 2)
        #expect(test["state"] as? String == "succeeded")
        let prepare = try #require(jobs.first { $0["id"] as? String == "prepare" })
        #expect((prepare["outputs"] as? [String: String]) == ["version": "2.1"])
        for key in [
            "id", "pipeline", "state", "reason", "attempts", "exitCode", "startedAt", "finishedAt",
            "nextAttemptAt", "outputs",
        ] {
            #expect(prepare.keys.contains(key), "status --json job has \(key)")
        }
        let pipelines = try #require(status["pipelines"] as? [[String: Any]])
        #expect(pipelines.contains { $0["name"] as? String == "ci" && $0["maxConcurrent"] as? Int == 2 })

        #expect(try await workspace.run("logs", "build").stdout == "building 2.1\n")
        #expect(try await workspace.run("logs", "test", "--attempt", "1").status == 0)
        #expect(try await workspace.run("logs", "nope").status == 1)

        let events = workspace.read("events.jsonl").split(separator: "\n").map(String.init)
        let kinds = try events.map { line -> String in
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["time"] is String)
            #expect(object["run"] is String)
            return "\(object["event"] as? String ?? "?") \(object["job"] as? String ?? "")"
        }
        #expect(kinds.prefix(3) == ["queued prepare", "queued build", "queued test"])
        #expect(kinds.last == "run-finished ")
        #expect(kinds.contains("output prepare"))
        #expect(kinds.firstIndex(of: "succeeded prepare")! < kinds.firstIndex(of: "started build")!)
        #expect(kinds.filter { $0 == "retrying test" }.count == 1)
    }

    @Test func aFailureExitsOneAndBlocksDependents() async throws {
        let workspace = try Workspace(files: [
            "a.yaml":
                "jobs:\n  broken:\n    run: exit 4\n  after:\n    needs: [broken]\n    run: echo never\n"
        ])
        let run = try await workspace.run("run", "jobs", "--progress", "none")
        #expect(run.status == 1)
        let status = try await workspace.run("status").stdout
        #expect(status.contains("exit:4"))
        #expect(status.contains("blocked"))
        let json = try await statusJSON(workspace.run("status", "--json").stdout)
        let jobs = try #require(json["jobs"] as? [[String: Any]])
        let after = try #require(jobs.first { $0["id"] as? String == "after" })
        #expect(after["state"] as? String == "blocked")
        #expect(after["reason"] as? String == "needs:broken")
    }

    @Test func validateReportsEveryProblemOfEveryFileWithExitTwo() async throws {
        let workspace = try Workspace(files: [
            "a.yaml": "jobs:\n  a:\n    run: x\n    neds: [b]\n",
            "b.yaml": "jobs:\n  b:\n    run: x\n    needs: [zzz]\n    timeout: soon\n",
        ])
        let result = try await workspace.run("validate", workspace.jobs)
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(
            lines.contains {
                $0.hasSuffix("a.yaml:4:5: error: unknown key 'neds' in job 'a'; did you mean 'needs'?")
            })
        #expect(lines.contains { $0.contains("b.yaml:4:13: error: job 'b' needs 'zzz'") })
        #expect(lines.contains { $0.contains("b.yaml:5:14: error: timeout: 'soon' is not a duration") })
        #expect(lines.last == "3 errors; nothing was run")

        let run = try await workspace.run("run", "jobs")
        #expect(run.status == 2)
        #expect(
            !FileManager.default.fileExists(atPath: workspace.state + "/db"), "nothing ran, nothing stored")
    }

    @Test func graphPrintsDotAndMermaid() async throws {
        let workspace = try Workspace(files: ["ci.yaml": Self.pipeline])
        let dot = try await workspace.run("graph", workspace.jobs)
        #expect(dot.stdout.contains("\"prepare\" -> \"build\";"))
        let mermaid = try await workspace.run("graph", workspace.jobs, "--format", "mermaid")
        #expect(mermaid.stdout.hasPrefix("flowchart LR"))
        #expect(mermaid.stdout.contains("j0 --> j1"))
    }

    @Test func aStatePathThatIsAFileExitsThree() async throws {
        let workspace = try Workspace(files: ["ci.yaml": Self.pipeline])
        try "not a directory".write(toFile: workspace.state, atomically: true, encoding: .utf8)
        let run = try await workspace.run("run", "jobs")
        #expect(run.status == 3)
        #expect(run.stderr.contains("is a file, not a directory"))
        #expect(try String(contentsOfFile: workspace.state, encoding: .utf8) == "not a directory")
    }

    @Test func aCorruptDatabaseExitsThreeAndIsLeftAlone() async throws {
        let workspace = try Workspace(files: ["ci.yaml": Self.pipeline])
        try FileManager.default.createDirectory(
            atPath: workspace.state + "/db", withIntermediateDirectories: true)
        let garbage = Data(repeating: 0xAB, count: 16384)
        try garbage.write(to: URL(fileURLWithPath: workspace.state + "/db/data.mdb"))
        let run = try await workspace.run("run", "jobs")
        #expect(run.status == 3)
        #expect(run.stderr.contains("damaged"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: workspace.state + "/db/data.mdb")) == garbage)
        #expect(try await workspace.run("status").status == 3)
    }

    @Test func aSecondRunnerIsRefusedAndSigtermStopsCleanlyThenRunResumes() async throws {
        let workspace = try Workspace(files: [
            "slow.yaml": """
            jobs:
              first:
                run: echo one
              slow:
                needs: [first]
                run: test -f ../release || exec sleep 600
              last:
                needs: [slow]
                run: echo done
            """
        ])
        let out = Pipe()
        let runner = try workspace.start(["run", "jobs", "--events", "-"], stdout: out)
        let reader = LineReader(out)
        #expect(await reader.waitFor("\"job\": \"slow\", \"attempt\": 1, \"event\": \"started\""))

        let second = try await workspace.run("run", "jobs")
        #expect(second.status == 3)
        #expect(second.stderr.contains("in use by another jobrunner (pid \(runner.processIdentifier))"))

        let live = try await statusJSON(workspace.run("status", "--json").stdout)
        let liveJobs = try #require(live["jobs"] as? [[String: Any]])
        #expect(liveJobs.first { $0["id"] as? String == "slow" }?["state"] as? String == "running")
        #expect(liveJobs.first { $0["id"] as? String == "last" }?["reason"] as? String == "needs:slow")

        kill(runner.processIdentifier, SIGTERM)
        #expect(await waitForExit(runner) == 143)
        #expect(reader.all.contains { $0.contains("\"event\": \"interrupted\"") })
        let stopped = try await statusJSON(workspace.run("status", "--json").stdout)
        #expect((stopped["run"] as? [String: Any])?["state"] as? String == "stopped")

        try "go".write(toFile: workspace.root + "/release", atomically: true, encoding: .utf8)
        let resumed = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(resumed.stdout.contains("(resumed)"))
        #expect(!resumed.stdout.contains("started     first"), "a finished job does not run again")
        #expect(resumed.stdout.contains("started     slow (attempt 2)"))
        // SPEC 5.9: a resumed run says so on its first line; a new run does not.
        let first = try #require(resumed.stdout.split(separator: "\n").first)
        #expect(first.contains("resuming    run "), "first line: \(first)")
        #expect(first.hasSuffix(": 1 of 3 jobs final already"), "first line: \(first)")
        let fresh = try await workspace.run("run", "jobs", "--new", "--progress", "plain")
        #expect(fresh.status == 0)
        #expect(!fresh.stdout.contains("resuming"), "a new run does not say it resumes")
    }
}

@Suite(.serialized) struct OperatorTests {
    @Test func logsFollowPrintsOutputUntilTheAttemptEnds() async throws {
        let workspace = try Workspace(files: [
            "talk.yaml": """
            jobs:
              talk:
                run: |
                  echo first
                  read line < ../gate.fifo
                  echo second
            """
        ])
        #expect(mkfifo(workspace.root + "/gate.fifo", 0o600) == 0)
        let out = Pipe()
        let runner = try workspace.start(["run", "jobs", "--events", "-"], stdout: out)
        let events = LineReader(out)
        #expect(await events.waitFor("\"event\": \"started\""))
        let logOut = Pipe()
        let follower = try workspace.start(["logs", "talk", "-f"], stdout: logOut)
        let lines = LineReader(logOut)
        #expect(await lines.waitFor("first"))
        // Opening the FIFO for writing lets the job's `read` go on.
        let gate = try #require(FileHandle(forWritingAtPath: workspace.root + "/gate.fifo"))
        gate.write(Data("go\n".utf8))
        try gate.close()
        #expect(await waitForExit(follower) == 0)
        #expect(await lines.waitFor("second"))
        #expect(lines.all == ["first", "second"])
        #expect(await waitForExit(runner) == 0)
    }

    @Test func aKilledRunnersJobProcessesAreEndedByTheNextRun() async throws {
        let workspace = try Workspace(files: [
            "orphan.yaml": """
            jobs:
              long:
                run: |
                  if [ -f ../release ]; then exit 0; fi
                  echo $$ > ../pid.fifo
                  exec sleep 600
                retry: { attempts: 2, backoff: none }
            """
        ])
        #expect(mkfifo(workspace.root + "/pid.fifo", 0o600) == 0)
        let runner = try workspace.start(["run", "jobs", "--progress", "none"])
        // The job blocks writing its pid into the FIFO until this read takes it.
        let text = await readOnce(workspace.root + "/pid.fifo")
        let orphan = try #require(Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        kill(runner.processIdentifier, SIGKILL)
        _ = await waitForExit(runner)
        #expect(kill(orphan, 0) == 0, "the job outlives its runner")

        try "go".write(toFile: workspace.root + "/release", atomically: true, encoding: .utf8)
        let next = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(next.status == 0, "\(next.stdout)\(next.stderr)")
        #expect(next.stdout.contains("interrupted"))
        #expect(next.stdout.contains("(resumed)"))
        // The orphan is not our child: it is gone once signalling it fails, or it is a zombie.
        let alive =
            kill(orphan, 0) == 0
            && !(FileManager.default.contents(atPath: "/proc/\(orphan)/stat").map {
                String(decoding: $0, as: UTF8.self).contains(") Z ")
            } ?? true)
        #expect(!alive, "the next runner ended the dead runner's job")
    }
}

/// Reads a FIFO (or file) to its end on a thread of its own.
func readOnce(_ path: String) async -> String {
    await withCheckedContinuation { continuation in
        Thread {
            let data = FileHandle(forReadingAtPath: path)?.readAllBytes() ?? Data()
            continuation.resume(returning: String(decoding: data, as: UTF8.self))
        }.start()
    }
}

@Suite(.serialized) struct LiveOperatorTests {
    /// `long` runs until it is cancelled: it waits on a FIFO that nothing opens for writing. A
    /// fixed length (it was `sleep 30`) let the run end before the test acted when the suite's
    /// other tests kept this one from being scheduled for longer than that.
    static let jobs = """
        pipelines:
          p: { maxConcurrent: 1 }
        jobs:
          long: { run: read line < ../long.fifo, pipeline: p }
          after: { run: echo after, needs: [long], pipeline: p }
          next: { run: echo next, pipeline: p }
        """

    @Test func suspendCancelAndResumeActOnALiveRunner() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.jobs])
        #expect(mkfifo(workspace.root + "/long.fifo", 0o600) == 0)
        let out = Pipe()
        let runner = try workspace.start(["run", "jobs", "--events", "-"], stdout: out)
        // On a failed expectation below, SIGTERM stops the runner and ends `long` with it.
        defer { if runner.isRunning { kill(runner.processIdentifier, SIGTERM) } }
        let events = LineReader(out)
        #expect(await events.waitFor("\"job\": \"long\", \"attempt\": 1, \"event\": \"started\""))

        let suspend = try await workspace.run("suspend", "p")
        #expect(suspend.status == 0)
        #expect(suspend.stdout == "pipeline p suspended (count 1)\n")
        #expect(await events.waitFor("\"event\": \"suspended\", \"pipeline\": \"p\""))

        let cancel = try await workspace.run("cancel", "long")
        #expect(
            cancel.stdout.contains(
                "long cancelled: the runner (pid \(runner.processIdentifier)) ends its running attempt"),
            "\(cancel.stdout)")
        #expect(await events.waitFor("\"job\": \"after\", \"event\": \"blocked\""))
        #expect(await events.waitFor("\"job\": \"long\", \"event\": \"cancelled\""))

        let status = try await statusJSON(workspace.run("status", "--json").stdout)
        let jobs = try #require(status["jobs"] as? [[String: Any]])
        #expect(jobs.first { $0["id"] as? String == "next" }?["reason"] as? String == "suspended")
        let pipelines = try #require(status["pipelines"] as? [[String: Any]])
        #expect(pipelines.first { $0["name"] as? String == "p" }?["suspended"] as? Int == 1)
        #expect(
            !events.all.contains { $0.contains("\"job\": \"next\", \"attempt\": 1, \"event\": \"started\"") })

        #expect(try await workspace.run("resume", "p").stdout == "pipeline p resumed\n")
        #expect(
            await ExitWatcher(runner).wait() == 1, "a cancelled job makes the run fail")
        #expect(
            events.all.contains { $0.contains("\"job\": \"next\", \"attempt\": 1, \"event\": \"succeeded\"") }
        )
        #expect(
            try await workspace.run("resume", "p").status == 1,
            "resuming a pipeline that is not suspended is an error")
    }

    @Test func retryAndSkipActOnALiveRunner() async throws {
        let workspace = try Workspace(files: [
            "a.yaml": """
            jobs:
              hold: { run: read line < ../hold.fifo }
              flaky: { run: test -f ../fixed }
              after-flaky: { run: echo after, needs: [flaky] }
              broken: { run: exit 3 }
              after-broken: { run: echo after, needs: [broken] }
            """
        ])
        #expect(mkfifo(workspace.root + "/hold.fifo", 0o600) == 0)
        let out = Pipe()
        let runner = try workspace.start(["run", "jobs", "--events", "-"], stdout: out)
        let events = LineReader(out)
        #expect(await events.waitFor("\"job\": \"after-flaky\", \"event\": \"blocked\""))
        #expect(await events.waitFor("\"job\": \"after-broken\", \"event\": \"blocked\""))

        try "".write(toFile: workspace.root + "/fixed", atomically: true, encoding: .utf8)
        let retry = try await workspace.run("retry", "flaky")
        #expect(retry.status == 0, "\(retry.stderr)")
        // The runner's own answer, as it applied the request.
        #expect(
            retry.stdout.contains("flaky gets another chance, with any jobs it blocked"), "\(retry.stdout)")
        #expect(await events.waitFor("\"job\": \"flaky\", \"attempt\": 2, \"event\": \"succeeded\""))
        #expect(await events.waitFor("\"job\": \"after-flaky\", \"attempt\": 1, \"event\": \"succeeded\""))

        let skip = try await workspace.run("skip", "broken")
        #expect(skip.status == 0, "\(skip.stderr)")
        #expect(skip.stdout.contains("broken skipped; the jobs it blocked may go on"), "\(skip.stdout)")
        // A request the runner refuses is refused by the command: exit 1, in the runner's words.
        let again = try await workspace.run("skip", "broken")
        #expect(again.status == 1, "\(again.stdout)")
        #expect(again.stderr.contains("cannot skip broken: broken is already skipped"), "\(again.stderr)")
        #expect(await events.waitFor("\"job\": \"broken\", \"event\": \"skipped\""))
        #expect(await events.waitFor("\"job\": \"after-broken\", \"attempt\": 1, \"event\": \"succeeded\""))

        let hold = try #require(FileHandle(forWritingAtPath: workspace.root + "/hold.fifo"))
        try hold.write(contentsOf: Data("go\n".utf8))
        try hold.close()
        #expect(await waitForExit(runner) == 0, "a retried success and a skip leave nothing failed")
    }

    @Test func retryReopensAFinishedRunAndTheNextRunRunsOnlyWhatWasBlocked() async throws {
        let workspace = try Workspace(files: [
            "a.yaml": """
            jobs:
              flaky: { run: test -f ../fixed }
              after: { run: echo after, needs: [flaky] }
              other: { run: echo other }
            """
        ])
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 1)
        #expect(try await workspace.run("retry", "other").status == 1, "a succeeded job cannot be retried")
        let retry = try await workspace.run("retry", "flaky")
        #expect(retry.status == 0)
        #expect(retry.stdout.contains("the next `jobrunner run` resumes run"))
        try "".write(toFile: workspace.root + "/fixed", atomically: true, encoding: .utf8)
        let again = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.contains("started     flaky (attempt 2)"))
        #expect(again.stdout.contains("started     after (attempt 1)"))
        #expect(!again.stdout.contains("started     other"))
    }
}
