import Foundation
import JobRunnerCore
import Testing

/// `notify:` hooks stepped through the conductor (SPEC 5.13): due in the decision that finishes
/// the run, delivered once durable, deleted once delivered, delivered again by the next runner
/// when stored, and awaited by `run`.
@Suite struct ConductorNotifyTests {
    static let ops = NotifyHook(name: "ops", on: [.failure], command: .shell("true"))

    /// The hooks the last decision stores, and those it delivers.
    func stored(_ decision: Decision) -> [OperatorRequest] {
        decision.changes.compactMap {
            if case .putRequest(OperatorRequest.notifyRequests, let request) = $0 { request } else { nil }
        }
    }

    func delivered(_ decision: Decision) -> [OperatorRequest] {
        decision.effects.compactMap { if case .notify(let request) = $0 { request } else { nil } }
    }

    @Test func aFailedRunStoresItsHookInTheDecisionThatFinishesItAndRunWaitsForIt() throws {
        var driver = ConductorDriver(oneShot: [job("build")], serve: false, notify: [Self.ops])
        driver.fail("build")
        let finishing = driver.last.changes.contains {
            if case .putRun(let run) = $0 { run.id == "main" && run.state == .failed } else { false }
        }
        #expect(finishing, "the run is finished in this decision")
        let request = try #require(stored(driver.last).first)
        #expect(request.jobID == "ops" && request.runID == "main" && request.kind == .notify)
        #expect(delivered(driver.last) == [request])
        #expect(driver.events.contains("notify-started "))
        #expect(!driver.conductor.isSettled, "run waits for its hooks")
        driver.send(.notified(request, failure: nil, interrupted: false))
        #expect(
            driver.last.changes.contains(
                .deleteRequest(runID: OperatorRequest.notifyRequests, id: request.id)))
        #expect(driver.last.events.map(\.kind) == [.notifySucceeded])
        #expect(driver.conductor.isSettled)
    }

    @Test func aSucceededRunIsNoFailureAndAHookForOtherJobsIsNotDue() {
        let mine = NotifyHook(name: "mine", on: [.always], jobs: ["tick"], command: .shell("true"))
        var driver = ConductorDriver(
            oneShot: [job("build")], periodic: [periodicJob("tick")], notify: [Self.ops, mine])
        driver.succeed("build")
        #expect(stored(driver.last).isEmpty)
        driver.succeed("tick", at: 0)
        #expect(stored(driver.last).map(\.jobID) == ["mine"])
        #expect(stored(driver.last).first?.runID == ConductorDriver.run("tick", 0))
    }

    @Test func aStoredHookIsDeliveredByTheNextRunnerAndAnInterruptedOneStaysStored() {
        let left = OperatorRequest(
            id: 9, kind: .notify, jobID: "ops", requestedAt: ConductorDriver.origin, runID: "old")
        var driver = ConductorDriver(notify: [Self.ops], notifications: [left])
        #expect(delivered(driver.last) == [left])
        driver.send(.notified(left, failure: nil, interrupted: true))
        #expect(driver.last.changes.isEmpty, "not deleted: the next runner delivers it")
    }

    @Test func aHookThatFailsIsReportedAndDeletedWithoutChangingTheRun() throws {
        var driver = ConductorDriver(oneShot: [job("build")], serve: false, notify: [Self.ops])
        driver.fail("build")
        let request = try #require(stored(driver.last).first)
        driver.send(.notified(request, failure: "exit 3", interrupted: false))
        #expect(driver.last.events.map(\.kind) == [.notifyFailed])
        #expect(driver.last.events.first?.reason == "exit 3")
        #expect(driver.runs["main"]?.state == .failed, "unchanged")
        #expect(!driver.last.changes.contains { if case .putRun = $0 { true } else { false } })
    }
}
