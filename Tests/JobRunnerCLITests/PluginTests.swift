import Foundation
import Testing

/// Plugin jobs end to end, on the built binary, the example plugins built beside it (`hello`, C)
/// and the tests' own (`testkit`, Swift; `badabi` and `oldswift`, C plugins that must be
/// refused), found in `testPluginDirectory`.
@Suite(.serialized) struct PluginTests {
    /// The directory of the built binary and the example plugins.
    static let buildDirectory = (realPath(jobrunnerBinary) as NSString).deletingLastPathComponent

    @Test func swiftAndCPluginsRunAndPassOutputsOn() async throws {
        let workspace = try Workspace(files: [
            "plugins.yaml": """
            jobs:
              greet:
                plugin: hello.greet
              echo:
                plugin: testkit.echo
                needs: [greet]
                with: { message: "hi there" }
              show:
                needs: [echo]
                run: echo "$JOBRUNNER_OUT_ECHO_IN_GREET_GREETING / $JOBRUNNER_OUT_ECHO_MESSAGE"
            """
        ])
        let run = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(try await workspace.run("logs", "greet").stdout == "hello from C, job greet\n")
        let echoLog = try await workspace.run("logs", "echo").stdout
        #expect(echoLog.contains("echo hi there from echo attempt 1\n"))
        #expect(echoLog.contains("warning: echoed count=1\n"), "swift-log lines reach the attempt's log")
        #expect(try await workspace.run("logs", "show").stdout == "hello from C / hi there\n")

        let jobs = try await workspace.statusJobs()
        let echo = try #require(jobs["echo"])
        let outputs = try #require(echo["outputs"] as? [String: String])
        #expect(outputs["message"] == "hi there")
        #expect(outputs["in_greet_greeting"] == "hello from C")
        #expect(jobs.values.allSatisfy { $0["state"] as? String == "succeeded" })
    }

    /// The sample jobs `make run` executes, plugin jobs included, in a scratch copy.
    @Test func sampleJobsRunWithTheirPluginJobs() async throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent().path
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: repository + "/jobs")
        where name.hasSuffix(".yaml") {
            files[name] = try String(contentsOfFile: repository + "/jobs/" + name, encoding: .utf8)
        }
        let workspace = try Workspace(files: files)
        let readme = "# a README to cache\n"
        try readme.write(toFile: workspace.root + "/README.md", atomically: true, encoding: .utf8)
        let run = try await workspace.run("run", "jobs")
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let jobs = try await workspace.statusJobs()
        let cache = try #require(jobs["cache-readme"])
        #expect(cache["attempts"] as? Int == 2, "the first attempt is rate-limited")
        let outputs = try #require(cache["outputs"] as? [String: String])
        #expect(outputs["bytes"] == String(readme.utf8.count))
        #expect(outputs["refreshed"] == "true")
        #expect(workspace.read(".build/sample-cache/README.md") == readme)
        #expect(try await workspace.run("logs", "release-notes").stdout.contains("hello from C"))
    }

    /// Every way a handler can end, and what the job makes of it.
    @Test func handlerEndingsBecomeJobStates() async throws {
        let workspace = try Workspace(files: [
            "endings.yaml": """
            jobs:
              throws:
                plugin: testkit.throws
              skip:
                plugin: testkit.skip
              after-skip:
                needs: [skip]
                run: echo went on
              c-fails:
                plugin: hello.fail
              slow:
                plugin: testkit.sleep
                with: { seconds: 30 }
                timeout: 300ms
              blocked:
                needs: [throws]
                plugin: noop.ok
            """
        ])
        let run = try await workspace.run("run", "jobs")
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let jobs = try await workspace.statusJobs()
        func job(_ id: String) -> (state: String?, reason: String?) {
            let record = jobs[id]
            return (record?["state"] as? String, record?["reason"] as? String)
        }
        #expect(job("throws") == ("failed", "the widget is broken"))
        #expect(job("skip") == ("skipped", "nothing to do"))
        #expect(job("after-skip").state == "succeeded")
        #expect(job("c-fails") == ("failed", "hello.fail always fails"))
        #expect(job("slow").state == "failed")
        #expect(job("slow").reason?.hasPrefix("timeout after 300ms") == true, "\(job("slow"))")
        #expect(job("blocked") == ("blocked", "needs:throws"))
    }

    /// `testkit.record`, which the crash test at scale (bench/torture.py) counts attempts with:
    /// one `JOB ATTEMPT` line per attempt, appended, relative paths from the job's directory.
    @Test func theRecordHandlerAppendsALinePerAttempt() async throws {
        let workspace = try Workspace(files: [
            "record.yaml": """
            pipelines:
              one: { maxConcurrent: 1 }
            jobs:
              first:
                pipeline: one
                plugin: testkit.record
                with: { file: attempts.txt }
              second:
                pipeline: one
                needs: [first]
                plugin: testkit.record
                with: { file: attempts.txt }
            """
        ])
        let run = try await workspace.run("run", "jobs", "--progress", "none")
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let lines = try String(contentsOfFile: workspace.jobs + "/attempts.txt", encoding: .utf8)
        #expect(lines == "first 1\nsecond 1\n")
    }

    /// A plugin's retry(after:) and outputs against a shell job's control and outputs files: the
    /// same events, the same delays, the same outputs.
    @Test func pluginRetryAndOutputsMatchAShellJobs() async throws {
        let workspace = try Workspace(files: [
            "parity.yaml": """
            pipelines:
              one: { order: sequential }
            jobs:
              shell:
                pipeline: one
                retry: { attempts: 5, delay: 30s, on: [3] }
                run: |
                  if [ "$JOBRUNNER_ATTEMPT" -lt 3 ]; then echo "retry-after=150ms" > "$JOBRUNNER_CONTROL"; exit 75; fi
                  echo "attempt=$JOBRUNNER_ATTEMPT" >> "$JOBRUNNER_OUTPUT"
              plugin:
                pipeline: one
                needs: [shell]
                retry: { attempts: 5, delay: 30s, on: [3] }
                plugin: testkit.flaky
                with: { until: 3, after: 0.15 }
            """
        ])
        let run = try await workspace.run("run", "jobs", "--events", "events.jsonl")
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")

        func story(of job: String) throws -> [String] {
            try workspace.read("events.jsonl").split(separator: "\n").compactMap { line in
                let event = try #require(
                    try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                guard event["job"] as? String == job, event["event"] as? String != "queued" else {
                    return nil
                }
                let parts = [
                    event["event"] as? String, (event["attempt"] as? Int).map(String.init),
                    (event["delay"] as? Double).map { String(format: "%.3f", $0) },
                    event["key"] as? String, event["value"] as? String,
                ]
                return parts.compactMap { $0 }.joined(separator: " ")
            }
        }
        let shell = try story(of: "shell")
        #expect(shell.contains("retrying 1 0.150"), "\(shell)")
        #expect(shell.contains("output 3 attempt 3"), "\(shell)")
        #expect(try story(of: "plugin") == shell)

        let jobs = try await workspace.statusJobs()
        let outputs = jobs.mapValues { $0["outputs"] as? [String: String] }
        #expect(outputs.values.allSatisfy { $0 == ["attempt": "3"] }, "\(outputs)")
        #expect(jobs.values.allSatisfy { $0["attempts"] as? Int == 3 })
    }

    static let problems = """
        jobs:
          missing:
            plugin: nowhere.run
          nosymbol:
            plugin: nosymbol.run
          abi:
            plugin: badabi.run
          swift:
            plugin: oldswift.run
          typo:
            plugin: testkit.ecko
          params:
            plugin: testkit.echo
            with:
              count: many
          junk:
            plugin: junk.run
          fine:
            run: echo fine
        """

    /// A workspace whose `plugins/` (beside the job directory) holds a library without the
    /// plugin symbol and a file that is no library at all.
    func problemWorkspace() throws -> Workspace {
        let workspace = try Workspace(files: ["problems.yaml": Self.problems])
        try FileManager.default.createDirectory(
            atPath: workspace.root + "/plugins", withIntermediateDirectories: true)
        let library = try #require(Self.someLibraryWithoutThePluginSymbol())
        try FileManager.default.copyItem(
            atPath: Self.realPath(library), toPath: workspace.root + "/plugins/libnosymbol.so")
        try "not a library".write(
            toFile: workspace.root + "/plugins/libjunk.so", atomically: true, encoding: .utf8)
        return workspace
    }

    @Test(arguments: ["validate", "run"]) func everyLoadProblemIsAnErrorAtItsJobsLine(command: String)
        async throws
    {
        let workspace = try problemWorkspace()
        let result = try await workspace.run(command, "jobs")
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        let errors = result.stderr.split(separator: "\n").map(String.init)
        func error(at position: String) -> String? {
            errors.first { $0.hasPrefix("jobs/problems.yaml:\(position): error: ") }
        }
        let searched = "\(testPluginDirectory), \(workspace.root)/plugins, \(Self.buildDirectory)"
        #expect(
            error(at: "3:13")?.contains("plugin 'nowhere' not found: no libnowhere.so in \(searched)")
                == true, "\(errors)")
        #expect(error(at: "5:13")?.contains("does not export jobrunner_plugin_v1") == true, "\(errors)")
        #expect(
            error(at: "7:13")?.contains("has ABI version 2; this jobrunner loads ABI version 1") == true,
            "\(errors)")
        #expect(error(at: "9:13")?.contains("was built with Swift 5.9") == true, "\(errors)")
        #expect(error(at: "11:13")?.contains("has no handler 'ecko'") == true, "\(errors)")
        #expect(error(at: "11:13")?.contains("did you mean 'testkit.echo'?") == true, "\(errors)")
        #expect(error(at: "15:7")?.contains("missing parameter 'message'") == true, "\(errors)")
        #expect(error(at: "17:13")?.contains("cannot load plugin 'junk'") == true, "\(errors)")
        #expect(errors.filter { $0.contains(": error: ") }.count == 7, "\(errors)")
        if command == "run" {
            #expect(result.stderr.contains("nothing was run"))
            #expect(!FileManager.default.fileExists(atPath: workspace.state + "/data.mdb"))
        }
    }

    @Test func pluginsListsWhatItFoundAndWhatItCouldNotLoad() async throws {
        let workspace = try problemWorkspace()
        let result = try await workspace.run("plugins", "jobs")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.contains(workspace.root + "/plugins") })
        let hello = try #require(lines.first { $0.hasPrefix("hello ") })
        #expect(hello.contains("1.0.0") && hello.contains("hello.greet, hello.fail"))
        #expect(hello.contains(Self.buildDirectory + "/libhello.so"))
        let testkit = try #require(lines.first { $0.hasPrefix("testkit ") })
        #expect(testkit.contains("testkit.echo") && testkit.contains("0.1.0"))
        #expect(lines.contains { $0.hasPrefix("noop ") && $0.contains("noop.ok") })
        #expect(lines.contains { $0.contains("junk") && $0.contains("cannot load") })
        #expect(lines.contains { $0.contains("badabi") && $0.contains("ABI version 2") })
    }

    /// A job file with a problem of its own (an unknown key) still gives `plugins` its
    /// plugins.paths, as the reference says.
    @Test func pluginsSearchesThePathsOfAJobFileWithAProblem() async throws {
        let workspace = try Workspace(files: [
            "broken.yaml": """
            plugins:
              paths: [mine]
            jobs:
              a:
                run: "true"
                bogus: 1
            """
        ])
        let result = try await workspace.run("plugins", "jobs")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(workspace.root + "/jobs/mine"), "\(result.stdout)")
    }

    /// A crashing plugin under `isolation: process` fails its attempt, naming the signal; the
    /// rest of the run goes on.
    @Test func anIsolatedCrashFailsOneAttemptAndTheRunGoesOn() async throws {
        let workspace = try Workspace(files: [
            "crash.yaml": """
            jobs:
              crash:
                plugin: testkit.crash
                isolation: process
                retry: { attempts: 2, delay: 10ms }
              fine:
                plugin: testkit.echo
                isolation: process
                with: { message: ok }
              after:
                needs: [fine]
                run: echo "after $JOBRUNNER_OUT_FINE_MESSAGE"
            """
        ])
        let run = try await workspace.run(["run", "jobs"], environment: ["SWIFT_BACKTRACE": "enable=no"])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let jobs = try await workspace.statusJobs()
        let crash = try #require(jobs["crash"])
        #expect(crash["state"] as? String == "failed")
        #expect(crash["attempts"] as? Int == 2)
        #expect(
            (crash["reason"] as? String)?.contains("the plugin's worker died: signal") == true, "\(crash)")
        #expect(jobs["after"]?["state"] as? String == "succeeded")
        #expect(try await workspace.run("logs", "after").stdout == "after ok\n")
        #expect(try await workspace.run("logs", "crash").stdout.contains("testkit.crash was asked to crash"))
    }

    /// An in-process crash takes the runner down; each restart counts it, and the third one in a
    /// row fails the job (SPEC 5.9) so the rest can finish.
    @Test func anInProcessCrashIsRecoveredByTheCrashLoopRule() async throws {
        let workspace = try Workspace(files: [
            "crash.yaml": """
            jobs:
              crash:
                plugin: testkit.crash
                retry: { attempts: 10, delay: 10ms }
              fine:
                needs: [crash]
                run: echo never
              other:
                run: echo other
                retry: { attempts: 5 }
            """
        ])
        let quiet = ["SWIFT_BACKTRACE": "enable=no"]
        var runs: [Finished] = []
        for _ in 0..<4 {
            let run = try await workspace.run(["run", "jobs"], environment: quiet)
            runs.append(run)
            if !run.signalled { break }
        }
        #expect(runs.count == 4, "\(runs.map(\.status))")
        #expect(runs.dropLast().allSatisfy { $0.signalled }, "the runner died three times")
        #expect(runs.last?.signalled == false && runs.last?.status == 1, "\(runs.last?.stderr ?? "")")
        let jobs = try await workspace.statusJobs()
        let crash = try #require(jobs["crash"])
        #expect(crash["state"] as? String == "failed")
        #expect(crash["reason"] as? String == "crashed the runner")
        #expect(jobs["fine"]?["state"] as? String == "blocked")
        #expect(jobs["other"]?["state"] as? String == "succeeded")
    }

    /// Thousands of in-process plugin jobs at once, in an unlimited pipeline: each call blocks
    /// one of the plugin threads while a Swift handler runs on the cooperative pool. (Calls on
    /// Dispatch's threads once exhausted them and the run never finished.)
    @Test func thousandsOfUnlimitedInProcessJobsFinish() async throws {
        let count = 3_000
        var text = "pipelines:\n  wide: { maxConcurrent: 0 }\njobs:\n"
        for index in 0..<count {
            text +=
                "  j\(index):\n    pipeline: wide\n    plugin: \(index % 2 == 0 ? "noop.ok" : "hello.greet")\n"
        }
        let workspace = try Workspace(files: ["wide.yaml": text])
        let process = try workspace.start(["run", "jobs", "--progress", "none"])
        let status = await ExitWatcher(process).wait()
        if status == nil { process.terminate() }
        #expect(status == 0)
        let jobs = try await workspace.statusJobs()
        #expect(jobs.count == count)
        #expect(jobs.values.allSatisfy { $0["state"] as? String == "succeeded" })
    }

    /// An in-process call that waits for a plugin thread does not spend its timeout waiting: it
    /// waits 2 s, longer than its timeout, and its call of 50 ms has 1.5 s (on a loaded machine
    /// 450 ms were little room).
    @Test func aTimeoutCountsFromTheCallNotFromTheWaitForAThread() async throws {
        let workspace = try Workspace(files: [
            "queue.yaml": """
            pipelines:
              wide: { maxConcurrent: 0 }
            jobs:
              holds-the-thread:
                pipeline: wide
                priority: 10
                plugin: testkit.sleep
                with: { seconds: 2 }
              waits-for-it:
                pipeline: wide
                plugin: testkit.sleep
                with: { seconds: 0.05 }
                timeout: 1500ms
            """
        ])
        let run = try await workspace.run(["run", "jobs"], environment: ["JOBRUNNER_PLUGIN_THREADS": "1"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    }

    /// A shared library that is no jobrunner plugin: LMDB's, which the runner links.
    static func someLibraryWithoutThePluginSymbol() -> String? {
        let directories = [
            "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
        ]
        for directory in directories {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            if let name = names.sorted().first(where: { $0.hasPrefix("liblmdb.so") }) {
                return directory + "/" + name
            }
        }
        return nil
    }

    /// `path` with every symbolic link resolved, as the runner reports plugin directories.
    static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
