import Foundation
import JobRunnerCore
import JobRunnerPages

/// A store holding runs built by hand, and the read model over it, for rendering pages.
struct PageFixture {
    let store = InMemoryQueueStore()
    let logs: String
    var model: ReadModel { ReadModel(store: store, lock: nil, logs: LogLocation(stateDirectory: logs)) }
    /// A fixed moment the pages are rendered for.
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    init() throws {
        logs =
            FileManager.default.temporaryDirectory.appendingPathComponent("pages-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: logs + "/logs", withIntermediateDirectories: true)
    }

    func commit(_ changes: [StoreChange]) async throws {
        let claim = try await store.claim(owner: "test")
        try await store.commit(changes, under: claim)
    }

    /// Writes an attempt's log where the read model looks for it.
    func writeLog(run: String, job: String, attempt: Int, _ bytes: [UInt8]) throws {
        let path = LogLayout.attemptLog(in: logs + "/logs", runID: run, jobID: job, attempt: attempt)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func settings(readOnly: Bool = false, live: Bool = true) -> PageSettings {
        PageSettings(csrfToken: readOnly ? nil : "tok-123", readOnly: readOnly, live: live, now: now)
    }
}

/// A job of a hand-built run.
struct JobSpec {
    var id: String
    var state: JobState
    var needs: [String] = []
    var pipeline = "default"
    var reason: JobReason?
    /// Outcomes of its attempts, in order; nil: still running.
    var attempts: [AttemptOutcome?] = []
    var outputs: [String: String] = [:]
}

extension PageFixture {
    /// Stores a run of these jobs, started `PageFixture.now` minus `age` seconds, each attempt
    /// lasting 10 s; makes it the current run unless it is an occurrence.
    @discardableResult
    func addRun(
        _ id: String, state: RunState, jobs: [JobSpec], age: Double = 600, occurrenceOf: String? = nil,
        limits: [String: Int] = [:]
    ) async throws -> RunRecord {
        let start = PageFixture.now.addingTimeInterval(-age)
        var run = RunRecord(
            id: id, state: state, startedAt: start,
            finishedAt: state.isFinal ? start.addingTimeInterval(100) : nil,
            jobIDs: jobs.map(\.id), runnerPID: 1, pipelineLimits: limits)
        run.occurrenceOf = occurrenceOf
        if occurrenceOf != nil { run.scheduledAt = start }
        var changes: [StoreChange] = [.putRun(run)]
        if occurrenceOf == nil { changes.append(.setCurrentRun(id)) }
        for job in jobs {
            var record = JobRecord(
                jobID: job.id, pipeline: job.pipeline, needs: job.needs, maxAttempts: 3, state: job.state,
                reason: job.reason, attempts: job.attempts.count)
            for (index, outcome) in job.attempts.enumerated() {
                let began = start.addingTimeInterval(Double(index) * 12)
                let attempt = AttemptRecord(
                    jobID: job.id, number: index + 1, outcome: outcome, startedAt: began,
                    finishedAt: outcome == nil ? nil : began.addingTimeInterval(10),
                    exitCode: outcome == .failed ? 2 : (outcome == .succeeded ? 0 : nil),
                    reason: outcome == .failed ? "exit:2" : nil)
                changes.append(.putAttempt(runID: id, attempt))
                record.startedAt = began
                record.finishedAt = attempt.finishedAt
            }
            changes.append(.putJob(runID: id, record))
            if !job.outputs.isEmpty {
                changes.append(.putOutputs(runID: id, jobID: job.id, occurrence: "", job.outputs))
            }
        }
        try await commit(changes)
        return run
    }
}

extension String {
    /// How many times `part` occurs.
    func occurrences(of part: String) -> Int {
        components(separatedBy: part).count - 1
    }
}
