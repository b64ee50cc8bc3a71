import Foundation

/// Applies an operator request to a run that no runner works on, through the same
/// ``Scheduler`` inputs a live runner feeds it: the scheduler is told the runner is stopped, then
/// the request; a running attempt it wants ended has no runner to end it, so its end comes at
/// once, `interrupted`.
public enum OfflineOperator {
    /// The result and what to do: the changes to commit (a finished run that gets open jobs again
    /// is reopened as `stopped`, so the next `jobrunner run` resumes it, SPEC 5.9; an unfinished
    /// one whose jobs are all final now is closed, `succeeded` or `failed`, as its runner would
    /// have closed it), and effects, of which `endAttempt` names processes a dead runner may have
    /// left.
    public static func apply(_ request: OperatorRequest, to snapshot: RunSnapshot, now: Date)
        -> (result: OperatorResult, decision: Decision)
    {
        var (result, decision, scheduler) = take(request, snapshot: snapshot, now: now)
        if case .applied = result, scheduler.isFinished, !scheduler.run.state.isFinal {
            decision.append(scheduler.close(now: now))
        }
        return (result, decision)
    }

    private static func take(_ request: OperatorRequest, snapshot: RunSnapshot, now: Date)
        -> (result: OperatorResult, decision: Decision, scheduler: Scheduler)
    {
        var scheduler = Scheduler(
            plan: RunPlan(stored: snapshot), run: snapshot.run, jobs: snapshot.jobs,
            attempts: snapshot.attempts,
            outputs: snapshot.outputs, options: SchedulerOptions(logDirectory: ""),
            random: SeededRandomSource(seed: 0), now: now)
        var decision = scheduler.handle([.stop, .operatorRequests([request], stored: false)], now: now)
        let result = decision.answers.first?.result ?? .refused("the request was not taken")
        if case .terminating(let id) = result, let attempt = scheduler.runningAttempt(id) {
            decision.append(
                scheduler.handle(
                    .attemptEnded(
                        jobID: id, attempt: attempt.number,
                        AttemptResult(.interrupted(.runnerGone))),
                    now: now))
            return (
                .applied("\(id) \(request.kind == .cancel ? "cancelled" : "skipped")"), decision, scheduler
            )
        }
        return (result, decision, scheduler)
    }
}
