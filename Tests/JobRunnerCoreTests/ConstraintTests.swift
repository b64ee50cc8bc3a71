import Foundation
import JobRunnerCore
import JobRunnerTesting
import Logging
import Testing

@Suite struct ConstraintTests {
    let token = ConstraintDefinition(name: "token", check: "", satisfy: "")

    func runner(_ harness: Harness, _ jobs: [JobDefinition], constraints: ScriptedConstraints) -> Runner {
        Runner(
            workload: Workload(jobs: jobs, pipelines: [], constraints: [token]), store: harness.store,
            handler: harness.handler, clock: harness.clock, observer: harness.observer,
            constraints: constraints,
            options: RunnerOptions(logDirectory: "/tmp/jobrunner-tests", runnerPID: 1),
            logger: .init(label: "t"),
            randomSeed: 9)
    }

    func guarded(_ id: String, retry: RetryPolicy = RetryPolicy()) -> JobDefinition {
        var definition = job(id, retry: retry)
        definition.constraints = ["token"]
        return definition
    }

    @Test func oneSatisfyServesEveryWaitingJobAndUsesNoAttempts() async throws {
        let constraints = ScriptedConstraints(holds: ["token": false])
        let harness = Harness()
        let summary = try await runner(
            harness, [guarded("a"), guarded("b"), guarded("c")], constraints: constraints
        ).run()
        #expect(summary.state == .succeeded)
        #expect(constraints.satisfies == ["token"], "satisfy runs once for all three")
        #expect(harness.handler.calls.allSatisfy { $0.attempt == 1 }, "waiting used no attempt")
        let waiting = harness.observer.events.filter { $0.kind == .waiting }
        #expect(waiting.allSatisfy { $0.reason == "constraint:token" })
        #expect(!waiting.isEmpty)
    }

    @Test func aHoldingConstraintIsCheckedAndTheJobRuns() async throws {
        let constraints = ScriptedConstraints(holds: ["token": true])
        let harness = Harness()
        #expect(
            try await runner(harness, [guarded("a"), job("free")], constraints: constraints).run().state
                == .succeeded)
        #expect(constraints.checks == ["token"], "only the guarded job checks")
        #expect(constraints.satisfies.isEmpty)
    }

    @Test func aFailedSatisfyFailsEachWaitingAttemptAndTheRetryPolicyDecides() async throws {
        let constraints = ScriptedConstraints(
            holds: ["token": false], satisfy: ["token": [.failed(lastLine: "vault sealed")]])
        let harness = Harness()
        let policy = RetryPolicy(attempts: 2, backoff: .none)
        let summary = try await runner(
            harness, [guarded("once"), guarded("twice", retry: policy), job("after", needs: ["once"])],
            constraints: constraints
        ).run()
        #expect(summary.state == .failed)
        let snapshot = try #require(try await harness.store.currentSnapshot())
        #expect(snapshot.jobs["once"]?.state == .failed)
        #expect(snapshot.jobs["once"]?.reason?.words == "constraint token failed: vault sealed")
        #expect(snapshot.attempts["once"]?.first?.reason == "constraint token failed: vault sealed")
        #expect(snapshot.jobs["after"]?.state == .blocked)
        #expect(snapshot.jobs["twice"]?.state == .succeeded, "its second attempt found the token satisfied")
        #expect(snapshot.jobs["twice"]?.attempts == 2)
        #expect(constraints.satisfies == ["token", "token"])
    }

    /// The run of one-shot jobs and a periodic occurrence, each a run of its own, wait on the
    /// same constraint: one `satisfy` serves both (SPEC 5.6: one at a time per constraint).
    @Test func oneSatisfyServesTheOneShotRunAndAnOccurrenceAlike() async throws {
        let constraints = ScriptedConstraints(holds: ["token": false], hold: ["token"])
        let harness = Harness()
        let runner = Runner(
            workload: Workload(
                jobs: [guarded("a"), guarded("refresh")], pipelines: [], constraints: [token]),
            store: harness.store, handler: harness.handler, clock: harness.clock, observer: harness.observer,
            constraints: constraints,
            options: RunnerOptions(logDirectory: "/tmp/jobrunner-tests", runnerPID: 1),
            logger: .init(label: "t"), randomSeed: 9, periodic: [everyMinute("refresh")])
        let task = Task { try await runner.run() }
        await harness.observer.waitFor(.waiting, job: "a")
        await harness.observer.waitFor(.waiting, job: "refresh")
        constraints.release("token")
        #expect(try await task.value.state == .succeeded)
        #expect(constraints.satisfies == ["token"], "one satisfy for both runs")
        #expect(Set(harness.handler.startedJobs) == ["a", "refresh"])
    }
}
