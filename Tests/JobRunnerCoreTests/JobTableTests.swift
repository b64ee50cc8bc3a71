import Foundation
import Testing

@testable import JobRunnerCore

/// The scheduler's job table keeps most records as a mark or a short summary: every record set
/// must come back exactly as it was, whichever way it is kept.
@Suite struct JobTableTests {
    let plan = RunPlan(
        jobs: [
            RunPlan.Job(id: "a", retry: RetryPolicy(attempts: 3)),
            RunPlan.Job(id: "b", needs: ["a"], allowFailure: true, when: .always),
            RunPlan.Job(id: "off", enabled: false),
        ], pipelines: [])
    let start = Date(timeIntervalSinceReferenceDate: 812_345_678.123_456)

    /// Records a job goes through, and some no run makes, each set then read back.
    var records: [JobRecord] {
        var running = JobRecord(jobID: "a", pipeline: "default", maxAttempts: 3, state: .running, attempts: 1)
        running.startedAt = start
        running.firstStartedAt = start
        var succeeded = running
        succeeded.state = .succeeded
        succeeded.exitCode = 0
        succeeded.finishedAt = start.addingTimeInterval(0.000_001)
        var succeededWithoutCode = succeeded
        succeededWithoutCode.exitCode = nil
        succeededWithoutCode.uncountedAttempts = 1
        var succeededOddly = succeeded
        succeededOddly.waitingSince = start
        var succeededElsewhere = succeeded
        succeededElsewhere.needs = ["b"]
        var failed = succeeded
        failed.state = .failed
        failed.exitCode = 2
        failed.reason = .ended(.exit(2))
        let pending = JobRecord(jobID: "a", pipeline: "default", maxAttempts: 3)
        var retried = pending
        retried.attempts = 1
        retried.uncountedAttempts = 1
        return [
            running, succeeded, succeededWithoutCode, succeededOddly, succeededElsewhere, failed, pending,
            retried, succeeded, pending,
        ]
    }

    @Test func everyRecordComesBackExactly() {
        var table = JobTable(plan: plan, new: NewJobRecords(runID: "R", plan: plan, now: start))
        let new = NewJobRecords(runID: "R", plan: plan, now: start)
        #expect(Array(table.values) == Array(new))
        #expect(table.wholeRecordCount == 1, "only the disabled job's record is kept whole")
        table["a"] = records[1]
        #expect(table.wholeRecordCount == 1, "a succeeded job keeps a summary")
        table["a"] = records[5]
        #expect(table.wholeRecordCount == 2, "a failed one keeps its record")
        table["a"] = records[6]
        #expect(table.wholeRecordCount == 1, "a pending one keeps nothing")
        for record in records {
            table["a"] = record
            #expect(table["a"] == record)
            #expect(table["off"] == new[2], "other jobs are left alone")
        }
        var other = records[1]
        other.jobID = "b"
        other.needs = ["a"]
        other.allowFailure = true
        other.when = .always
        other.maxAttempts = 1
        for record in records {
            table["a"] = record
            table["b"] = other
            #expect(table["a"] == record)
            #expect(table["b"] == other)
        }
        table["a"] = nil
        #expect(table["a"] == nil)
        #expect(table.values.map(\.jobID) == ["b", "off"])
        table["zz"] = records[0]
        #expect(table["zz"] == nil, "a job the plan does not have")
    }

    @Test func storedRecordsAreTakenAsTheyAre() {
        var failed = records[5]
        failed.jobID = "b"
        let table = JobTable(plan: plan, records: ["a": records[1], "b": failed, "gone": records[0]])
        #expect(table["a"] == records[1])
        #expect(table["b"] == failed)
        #expect(table["off"] == nil, "no record was stored for it")
        #expect(table.values.count == 2, "records of jobs the plan does not have are left out")
    }

    /// A stored row read in part (``JobProgress``) is kept as its whole record would be, with the
    /// plan's definition: the same record back, and the same form (mark, summary or whole).
    @Test func progressReadInPartIsKeptAsItsRecordWouldBe() {
        var byRecord = JobTable(plan: plan)
        var byProgress = JobTable(plan: plan)
        for stored in records {
            var withPlans = stored
            withPlans.needs = []
            withPlans.maxAttempts = 3
            withPlans.allowFailure = false
            withPlans.when = .success
            byRecord["a"] = withPlans
            // What is stored may differ from the plan: the plan's definition is taken.
            byProgress.take(JobProgress(stored))
            #expect(byProgress["a"] == withPlans)
            #expect(byProgress.wholeRecordCount == byRecord.wholeRecordCount, "\(stored)")
        }
        var elsewhere = records[1]
        elsewhere.occurrence = "2027"
        byProgress.take(JobProgress(elsewhere))
        #expect(byProgress["a"]?.occurrence == "2027")
        #expect(byProgress.wholeRecordCount == 1, "kept whole: a summary has no occurrence")
        byProgress.take(JobProgress(jobID: "gone", state: .failed))
        #expect(byProgress.values.map(\.jobID) == ["a"], "a job the plan does not have is left out")
        #expect(byProgress.state(at: 0) == .succeeded)
        #expect(byProgress.state(at: 1) == nil)
    }
}
