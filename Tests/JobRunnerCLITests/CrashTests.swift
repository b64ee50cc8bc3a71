import Foundation
import Glibc
import Testing

/// Kills the runner with SIGKILL at random moments while it works through a DAG, restarts it
/// each time, and checks that nothing was lost: every job succeeds, no job started before its
/// needs had finished, and no job that had finished ran again.
@Suite struct CrashTests {
    /// 36 jobs: six chains of six; every job after the first level also needs the job before
    /// it in the neighbouring chain. Each takes 0.3 s, three at a time: 3.6 s of work, more than
    /// three runner lives of at most 0.9 s can do, so at least three kills always happen.
    static func dag() -> (yaml: String, needs: [String: [String]]) {
        var yaml = """
            pipelines:
              work: { maxConcurrent: 3 }
            defaults:
              pipeline: work
              retry: { attempts: 50, backoff: none }
              run: |
                echo "start $JOBRUNNER_JOB $JOBRUNNER_ATTEMPT" >> ../marks
                sleep 0.3
                echo "end $JOBRUNNER_JOB $JOBRUNNER_ATTEMPT" >> ../marks
            jobs:

            """
        var needs: [String: [String]] = [:]
        for chain in 0..<6 {
            for step in 0..<6 {
                let id = "c\(chain)s\(step)"
                var list: [String] = []
                if step > 0 { list.append("c\(chain)s\(step - 1)") }
                if step > 0 && chain > 0 { list.append("c\(chain - 1)s\(step - 1)") }
                needs[id] = list
                yaml += "  \(id):\n"
                if !list.isEmpty { yaml += "    needs: [\(list.joined(separator: ", "))]\n" }
                if list.isEmpty { yaml += "    priority: 0\n" }
            }
        }
        return (yaml, needs)
    }

    @Test func survivesSigkillAtRandomMoments() async throws {
        let (yaml, needs) = Self.dag()
        let workspace = try Workspace(files: ["dag.yaml": yaml])
        // The lives run on a thread of their own: their kill moments must not wait for the
        // concurrency pool, which the other tests of the suite keep busy.
        let (root, state) = (workspace.root, workspace.state)
        let (kills, finished) = await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(returning: Self.killRepeatedly(root: root, state: state))
            }.start()
        }
        #expect(finished == 0, "the run completes after \(kills) kills")
        #expect(kills >= 3, "the runner was killed mid-run \(kills) times")

        let status = try await statusJSON(workspace.run("status", "--json").stdout)
        let jobs = try #require(status["jobs"] as? [[String: Any]])
        #expect(jobs.count == 36)
        #expect(
            jobs.allSatisfy { $0["state"] as? String == "succeeded" },
            "\(jobs.filter { $0["state"] as? String != "succeeded" })")
        let finalAttempt = Dictionary(
            uniqueKeysWithValues: jobs.map { ($0["id"] as? String ?? "", $0["attempts"] as? Int ?? 0) })

        let marks = workspace.read("marks").split(separator: "\n").map {
            $0.split(separator: " ").map(String.init)
        }
        var ended: [String: Int] = [:]  // job -> line of the end of its final (succeeded) attempt
        var startedAttempts = Set<String>()
        for (line, mark) in marks.enumerated() {
            guard mark.count == 3, let attempt = Int(mark[2]) else { continue }
            let (kind, job) = (mark[0], mark[1])
            if kind == "start" {
                #expect(
                    startedAttempts.insert("\(job)#\(attempt)").inserted,
                    "attempt \(attempt) of \(job) started twice")
                #expect(ended[job] == nil, "\(job) started again after it had succeeded")
                for need in needs[job] ?? [] {
                    #expect(ended[need] != nil, "\(job) started before its need \(need) had finished")
                }
                #expect(attempt <= finalAttempt[job] ?? 0)
            } else if kind == "end", attempt == finalAttempt[job] {
                ended[job] = line
            }
        }
        #expect(ended.count == 36, "every job's succeeded attempt ran to its end")
        // No job fails here, so an attempt after the first is one a kill interrupted: recovery ran.
        // (Whether the interrupted process itself got to its end depends on how fast the next
        // runner started, which a loaded machine decides.)
        #expect(
            finalAttempt.values.contains { $0 > 1 },
            "some attempt was interrupted by a kill and started again")
    }

    /// Starts `run` again and again, killing each runner at a random moment of its progress:
    /// after 2 to 6 of its attempts have started (from its events), plus up to 300 ms. Returns
    /// how many runners were killed and how the last one exited.
    static func killRepeatedly(root: String, state: String) -> (kills: Int, finished: Int32?) {
        var random = SystemRandomNumberGenerator()
        var kills = 0
        func start(_ arguments: [String], stdout: Pipe) -> Process? {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: jobrunnerBinary)
            process.arguments = arguments + ["--state", state]
            process.currentDirectoryURL = URL(fileURLWithPath: root)
            var environment = ProcessInfo.processInfo.environment
            environment["JOBRUNNER_STATE"] = nil
            process.environment = environment
            process.standardOutput = stdout
            process.standardError = FileHandle.nullDevice
            return (try? process.run()).map { process }
        }
        for _ in 0..<200 {
            let events = Pipe()
            guard let runner = start(["run", "jobs", "--progress", "none", "--events", "-"], stdout: events)
            else {
                return (kills, nil)
            }
            let lines = LineReader(events)
            let starts = Int.random(in: 2...6, using: &random)
            if lines.blockingWaitFor("\"event\": \"started\"", times: starts) {
                usleep(UInt32.random(in: 0...300_000, using: &random))
            }
            if !runner.isRunning {
                runner.waitUntilExit()
                return (kills, runner.terminationStatus)
            }
            kill(runner.processIdentifier, SIGKILL)
            runner.waitUntilExit()
            if runner.terminationReason == .uncaughtSignal && runner.terminationStatus == SIGKILL {
                kills += 1
            }
            // The run may have finished between the moment and the kill, or the kill may have
            // landed after the run's final state was stored: another `run` would start a new run.
            if runner.terminationReason == .exit && runner.terminationStatus == 0 { return (kills, 0) }
            let status = Pipe()
            guard let reader = start(["status", "--json"], stdout: status) else { return (kills, nil) }
            let text = status.fileHandleForReading.readAllBytes()
            reader.waitUntilExit()
            let run = (try? statusJSON(String(decoding: text, as: UTF8.self)))?["run"] as? [String: Any]
            if run?["state"] as? String == "succeeded" { return (kills, 0) }
        }
        return (kills, nil)
    }
}
