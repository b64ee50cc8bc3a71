import Foundation
import JobRunnerCore
import JobRunnerTesting
import Logging
import Testing

@Suite struct ConnectivityTests {
    func runner(
        _ harness: Harness, _ jobs: [JobDefinition], pipelines: [PipelineDefinition] = [], probe: ManualProbe
    )
        -> Runner
    {
        Runner(
            workload: Workload(
                jobs: jobs, pipelines: pipelines, connectivity: ConnectivitySettings(interval: .seconds(10))),
            store: harness.store, handler: harness.handler, clock: harness.clock, observer: harness.observer,
            connectivity: probe, options: RunnerOptions(logDirectory: "/tmp/jobrunner-tests", runnerPID: 1),
            logger: .init(label: "t"), randomSeed: 5)
    }

    @Test func offlineJobsWaitUsingNoAttemptsAndStartWithinOneInterval() async throws {
        let harness = Harness()
        let probe = ManualProbe(online: false)
        var fetch = job("fetch")
        fetch.requiresInternet = true
        let runner = runner(
            harness, [fetch, job("local"), job("upload", pipeline: "net")],
            pipelines: [PipelineDefinition(name: "net", requiresInternet: true)], probe: probe)
        let task = Task { try await runner.run() }
        await harness.observer.waitFor(.succeeded, job: "local")
        await harness.clock.waitForSleepers()
        let jobs = try #require(try await harness.store.currentSnapshot()).jobs
        #expect(jobs["fetch"]?.state == .waiting)
        #expect(jobs["fetch"]?.reason?.words == "internet")
        #expect(jobs["fetch"]?.attempts == 0)
        #expect(jobs["upload"]?.reason?.words == "internet", "a pipeline that needs the internet is held too")
        #expect(harness.handler.startedJobs == ["local"])
        #expect(harness.observer.events.contains { $0.kind == .suspended && $0.pipeline == "net" })

        probe.set(online: true)
        harness.clock.advance(by: 10)
        let summary = try await task.value
        #expect(summary.state == .succeeded)
        #expect(Set(harness.handler.startedJobs) == ["local", "fetch", "upload"])
        #expect(harness.observer.events.contains { $0.kind == .resumed && $0.pipeline == "net" })
    }

    @Test func aFailureWhileOfflineGoesBackToWaitingUncounted() async throws {
        let handler = ScriptedHandler(scripts: ["fetch": [.failed(exitCode: 6)]], hold: ["fetch"])
        let harness = Harness(handler: handler)
        let probe = ManualProbe(online: true)
        var fetch = job("fetch")
        fetch.requiresInternet = true
        let runner = runner(harness, [fetch], probe: probe)
        let task = Task { try await runner.run() }
        await handler.waitForStarts(1)
        probe.set(online: false)
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: 10)
        await harness.clock.waitForSleepers()
        handler.release("fetch")
        await harness.observer.waitFor(.waiting, job: "fetch")
        let record = try #require(try await harness.store.currentSnapshot()?.jobs["fetch"])
        #expect(record.reason?.words == "internet")
        #expect(record.countedAttempts == 0, "retry.attempts 1 is not used up by a failure while offline")

        probe.set(online: true)
        harness.clock.advance(by: 10)
        #expect(try await task.value.state == .succeeded)
        #expect(handler.calls.map(\.attempt) == [1, 2])
    }

    @Test func noJobNeedsTheInternetSoTheProbeIsNeverAsked() async throws {
        let harness = Harness()
        let probe = ManualProbe(online: false)
        #expect(try await runner(harness, [job("a")], probe: probe).run().state == .succeeded)
    }
}
