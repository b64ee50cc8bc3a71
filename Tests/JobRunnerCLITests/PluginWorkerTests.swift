import Foundation
import Testing

/// `isolation: process` end to end: calls run on a few persistent `jobrunner plugin-worker`
/// processes per plugin, on the built binary and the tests' `testkit` plugin.
@Suite(.serialized) struct PluginWorkerTests {
    static let quiet = ["SWIFT_BACKTRACE": "enable=no"]

    /// Many attempts at once on a pool of two workers: each worker runs one call at a time, and
    /// calls of different attempts share a worker, whose globals persist between calls.
    @Test func concurrentCallsShareAFewWorkersOneCallAtATime() async throws {
        let count = 12
        var text = "pipelines: { p: { maxConcurrent: 0 } }\njobs:\n"
        for index in 0..<count {
            text +=
                "  w\(index): { pipeline: p, plugin: testkit.whoami, isolation: process, with: { seconds: 0.05 } }\n"
        }
        let workspace = try Workspace(files: ["whoami.yaml": text])
        let run = try await workspace.run(["run", "jobs"], environment: ["JOBRUNNER_PLUGIN_WORKERS": "2"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let jobs = try await workspace.statusJobs()
        let outputs = (0..<count).compactMap { jobs["w\($0)"]?["outputs"] as? [String: String] }
        #expect(outputs.count == count, "\(jobs)")
        let pids = Set(outputs.compactMap { $0["pid"] })
        #expect(pids.count >= 1 && pids.count <= 2, "\(pids)")
        // Each worker counted its own calls: together, every call once.
        let callsByPid = Dictionary(grouping: outputs, by: { $0["pid"] ?? "" }).mapValues { group in
            Set(group.compactMap { $0["calls"].flatMap { Int($0) } })
        }
        #expect(callsByPid.values.map(\.count).reduce(0, +) == count)
        for calls in callsByPid.values { #expect(calls == Set(1...calls.count), "\(callsByPid)") }
    }

    /// A crash fails only its attempt, says which signal ended the worker, leaves the crash in
    /// that attempt's log, and the next call gets a new worker.
    @Test func aCrashFailsOnlyItsAttemptAndTheWorkerIsReplaced() async throws {
        let workspace = try Workspace(files: [
            "crash.yaml": """
            jobs:
              crash:
                plugin: testkit.crash
                isolation: process
              again:
                plugin: testkit.whoami
                isolation: process
                with: { crashOn: 1 }
                retry: { attempts: 2, delay: 10ms }
            """
        ])
        var environment = Self.quiet
        environment["JOBRUNNER_PLUGIN_WORKERS"] = "1"
        let run = try await workspace.run(["run", "jobs"], environment: environment)
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let jobs = try await workspace.statusJobs()
        let crash = try #require(jobs["crash"])
        #expect(crash["state"] as? String == "failed")
        let reason = crash["reason"] as? String ?? ""
        #expect(reason.hasPrefix("the plugin's worker died: signal "), "\(crash)")
        let again = try #require(jobs["again"])
        #expect(again["state"] as? String == "succeeded", "\(jobs)")
        #expect(again["attempts"] as? Int == 2)
        #expect((again["outputs"] as? [String: String])?["calls"] == "1", "a new worker: \(again)")
        #expect(try await workspace.run("logs", "crash").stdout.contains("testkit.crash was asked to crash"))
        let againLog = try await workspace.run("logs", "again", "--attempt", "1").stdout
        #expect(againLog.contains("testkit.whoami was asked to crash"))
        #expect(!againLog.contains("testkit.crash"), "another attempt's crash stays in its own log")
    }

    /// `isolation: process-per-attempt` keeps the child process of its own per attempt.
    @Test func processPerAttemptStartsAProcessForEachAttempt() async throws {
        let workspace = try Workspace(files: [
            "fresh.yaml": """
            jobs:
              a: { plugin: testkit.whoami, isolation: process-per-attempt }
              b: { plugin: testkit.whoami, isolation: process-per-attempt, needs: [a] }
              crash: { plugin: testkit.crash, isolation: process-per-attempt }
            """
        ])
        let run = try await workspace.run(["run", "jobs"], environment: Self.quiet)
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let jobs = try await workspace.statusJobs()
        let a = jobs["a"]?["outputs"] as? [String: String]
        let b = jobs["b"]?["outputs"] as? [String: String]
        #expect(a?["calls"] == "1" && b?["calls"] == "1", "\(jobs)")
        #expect(a?["pid"] != b?["pid"])
        #expect(
            (jobs["crash"]?["reason"] as? String)?.hasPrefix("the plugin's process died: signal ") == true)
    }

    /// What a handler writes to standard output and error lands in its own attempt's log only,
    /// even when the attempts share a worker.
    @Test func aCallsOutputLandsInItsOwnAttemptsLog() async throws {
        var text = "pipelines: { p: { maxConcurrent: 0 } }\njobs:\n"
        for index in 0..<6 {
            text += "  c\(index): { pipeline: p, plugin: testkit.chatter, isolation: process }\n"
        }
        let workspace = try Workspace(files: ["chatter.yaml": text])
        let run = try await workspace.run(["run", "jobs"], environment: ["JOBRUNNER_PLUGIN_WORKERS": "2"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        for index in 0..<6 {
            let log = try await workspace.run("logs", "c\(index)").stdout
            let lines = Set(log.split(separator: "\n").map(String.init))
            #expect(lines == ["stdout of c\(index)", "stderr of c\(index)"], "\(log)")
        }
    }

    /// A call that outlives its timeout is ended with its worker; the next call gets a new one.
    /// One at a time, in load order, on one worker: `first` starts it, `hang` times out on it,
    /// `again` needs a new one. Only `hang` has a timeout: a call that must succeed within a
    /// second, the start of its worker included, timed out on a loaded machine.
    @Test func aHungCallIsEndedByItsTimeoutAndTheWorkerReplaced() async throws {
        let workspace = try Workspace(files: [
            "hang.yaml": """
            pipelines: { p: { maxConcurrent: 1 } }
            jobs:
              first:
                pipeline: p
                plugin: testkit.whoami
                isolation: process
              hang:
                pipeline: p
                plugin: testkit.sleep
                isolation: process
                with: { seconds: 600 }
                timeout: 1s
                killGrace: 0s
              again:
                pipeline: p
                plugin: testkit.whoami
                isolation: process
            """
        ])
        let run = try await workspace.run(["run", "jobs"], environment: ["JOBRUNNER_PLUGIN_WORKERS": "1"])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let jobs = try await workspace.statusJobs()
        #expect(jobs["hang"]?["state"] as? String == "failed", "\(jobs)")
        #expect(jobs["hang"]?["reason"] as? String == "timeout after 1s", "\(jobs)")
        let first = try #require(jobs["first"]?["outputs"] as? [String: String], "\(jobs)")
        let again = try #require(jobs["again"]?["outputs"] as? [String: String], "\(jobs)")
        #expect(first["pid"] != nil && again["pid"] != first["pid"], "a new worker: \(first) \(again)")
        #expect(again["calls"] == "1", "a new worker: \(again)")
    }

    /// A worker that cannot load its plugin (here: the library was removed after the runner
    /// checked it) fails the attempt, saying why.
    @Test func aWorkerThatCannotStartFailsTheAttemptWithTheReason() async throws {
        let workspace = try Workspace(files: [
            "gone.yaml": """
            plugins: { paths: [../plugins] }
            jobs:
              remove:
                run: rm ../plugins/libtestkit.so
              call:
                plugin: testkit.echo
                isolation: process
                with: { message: hi }
                needs: [remove]
            """
        ])
        try FileManager.default.createDirectory(
            atPath: workspace.root + "/plugins", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: testPluginDirectory + "/libtestkit.so",
            toPath: workspace.root + "/plugins/libtestkit.so")
        let run = try await workspace.run("run", "jobs")
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let call = try #require(try await workspace.statusJobs()["call"])
        #expect(call["state"] as? String == "failed")
        let reason = call["reason"] as? String ?? ""
        #expect(reason.hasPrefix("the plugin's worker cannot load it: "), "\(call)")
        #expect(reason.contains("libtestkit.so"), "\(call)")
    }

    /// Workers die with the runner, even when it is killed with SIGKILL in the middle of calls.
    @Test func noWorkerOutlivesARunnerKilledWithSIGKILL() async throws {
        let workspace = try Workspace(files: [
            "sleepy.yaml": """
            pipelines: { p: { maxConcurrent: 0 } }
            jobs:
              s1: { pipeline: p, plugin: testkit.sleep, isolation: process, with: { seconds: 600 } }
              s2: { pipeline: p, plugin: testkit.sleep, isolation: process, with: { seconds: 600 } }
              s3: { pipeline: p, plugin: testkit.sleep, isolation: process, with: { seconds: 600 } }
            """
        ])
        let runner = try workspace.start(
            ["run", "jobs", "--progress", "none"], environment: ["JOBRUNNER_PLUGIN_WORKERS": "2"])
        let watcher = ExitWatcher(runner)
        var workers: [Int32] = []
        // Looked for until they are there (or the runner is gone), with only the suite's guard.
        let deadline = ContinuousClock.now + TestLimits.safety
        while workers.count < 2 && runner.isRunning && ContinuousClock.now < deadline {
            workers = Self.workers(of: runner.processIdentifier)
            if workers.count < 2 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(workers.count == 2, "the runner started its two workers")
        kill(runner.processIdentifier, SIGKILL)
        _ = await watcher.wait()
        var alive = workers
        while !alive.isEmpty && ContinuousClock.now < deadline {
            alive = alive.filter(Self.isAlive)
            if !alive.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(alive.isEmpty, "workers left running: \(alive)")
        for pid in alive { kill(pid, SIGKILL) }
    }

    /// The `plugin-worker` children of `parent`.
    static func workers(of parent: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                status.contains("\nPPid:\t\(parent)\n"),
                let command = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")
            else { return false }
            return String(decoding: command, as: UTF8.self).contains("plugin-worker")
        }
    }

    /// Whether `pid` runs (a zombie waiting to be reaped does not).
    static func isAlive(_ pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else {
            return false
        }
        return !status.contains("State:\tZ") && !status.contains("State:\tX")
    }
}
