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
        var random = SystemRandomNumberGenerator()
        var kills = 0
        var finished: Int32?
        for _ in 0..<200 {
            let events = Pipe()
            let runner = try workspace.start(
                ["run", "jobs", "--progress", "none", "--events", "-"], stdout: events)
            let lines = LineReader(events)
            let watcher = ExitWatcher(runner)
            // A random moment in the run's progress: after 2 to 6 attempts of this life have
            // started (counted from its events, so a loaded machine cannot stretch a life until
            // the run is done), plus up to 300 ms.
            let starts = Int.random(in: 2...6, using: &random)
            if !(await lines.waitFor("\"event\": \"started\"", times: starts)) {
                finished = await watcher.wait(atMost: .seconds(60))
                break
            }
            if let exited = await watcher.wait(
                atMost: .milliseconds(UInt64.random(in: 0...300, using: &random)))
            {
                finished = exited
                break
            }
            kill(runner.processIdentifier, SIGKILL)
            let status = await watcher.wait(atMost: .seconds(60))
            if status == SIGKILL { kills += 1 }
            // The run may have finished between the deadline and the kill, or the kill may have
            // landed after the run's final state was stored: another `run` would start a new
            // run, so stop here.
            if status == 0 {
                finished = 0
                break
            }
            let run = try statusJSON(workspace.run("status", "--json").stdout)["run"] as? [String: Any]
            if run?["state"] as? String == "succeeded" {
                finished = 0
                break
            }
        }
        #expect(finished == 0, "the run completes after \(kills) kills")
        #expect(kills >= 3, "the runner was killed mid-run \(kills) times")

        let status = try statusJSON(workspace.run("status", "--json").stdout)
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
}
