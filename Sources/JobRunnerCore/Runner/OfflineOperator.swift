import Foundation

/// Applies an operator request to a run that no runner works on: the same rules the live
/// runner applies (``Scheduler``), on the stored records alone.
public enum OfflineOperator {
    /// The result and the changes to commit. A finished run that gets open jobs again is
    /// reopened (`stopped`), so the next `jobrunner run` resumes it (SPEC 5.9).
    public static func apply(_ request: OperatorRequest, to snapshot: RunSnapshot, now: Date)
        -> (result: OperatorResult, changes: [StoreChange])
    {
        let run = snapshot.run
        let definitions = run.jobIDs.compactMap { id -> JobDefinition? in
            guard let record = snapshot.jobs[id] else { return nil }
            return JobDefinition(
                id: id, handler: .shell(""), pipeline: record.pipeline, needs: record.needs,
                retry: RetryPolicy(attempts: record.maxAttempts))
        }
        let pipelines = run.pipelineLimits.map { PipelineDefinition(name: $0.key, maxConcurrent: $0.value) }
        var scheduler = Scheduler(
            workload: Workload(jobs: definitions, pipelines: pipelines), runID: run.id, jobs: snapshot.jobs,
            outputs: snapshot.outputs, suspended: [:], maxRunning: nil, logDirectory: "", now: now)
        _ = scheduler.takeBatch()
        var result = scheduler.apply(request, now: now)
        if case .terminating(let id) = result {
            // Its runner is gone; the next runner ends any process the attempt left behind.
            scheduler.stopRequests[id] = nil
            scheduler.finishByOperator(id, kind: request.kind, now: now)
            result = .applied("\(id) \(request.kind == .cancel ? "cancelled" : "skipped")")
        }
        var changes = scheduler.takeBatch().changes
        if run.state.isFinal && !scheduler.isFinished {
            var reopened = run
            reopened.state = .stopped
            reopened.finishedAt = nil
            changes.append(.putRun(reopened))
        }
        return (result, changes)
    }
}
