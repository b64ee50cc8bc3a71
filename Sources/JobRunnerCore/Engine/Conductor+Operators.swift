import Foundation

/// The operator's requests about periodic jobs (SPEC 5.12): `trigger`, and `retry`, `skip` and
/// `cancel` of an occurrence, under way or finished.
extension Conductor {
    /// Takes the requests stored under ``OperatorRequest/periodicRequests``; each is deleted in
    /// the commit that stores what became of it, so a command reads its answer there. After a
    /// stop they stay stored, for the next runner.
    /// - Parameter finished: the stored snapshots of the finished occurrence runs the requests
    ///   name (read by the shell, as reads are asynchronous).
    mutating func takePeriodicRequests(
        _ requests: [OperatorRequest], finished: [String: RunSnapshot], now: Date
    ) {
        guard !stopped else { return }
        for request in requests {
            decision.changes.append(.deleteRequest(runID: OperatorRequest.periodicRequests, id: request.id))
            guard takenPeriodicRequests.insert(request.id).inserted else { continue }
            if request.kind == .trigger {
                trigger(request, now: now)
            } else {
                act(on: request, finished: finished, now: now)
            }
        }
    }

    /// `jobrunner trigger`: an occurrence now, as the job's `overlap` allows.
    private mutating func trigger(_ request: OperatorRequest, now: Date) {
        let (outcome, plan) = timetable.trigger(request.jobID, at: request.requestedAt)
        let result: OperatorResult
        switch outcome {
        case .started(let occurrence):
            result = .applied("triggered \(Self.runID(of: occurrence))")
        case .queued(let occurrence):
            result = .applied("queued \(Self.runID(of: occurrence)) behind the running occurrence")
        case .refused(let why):
            result = .refused(why)
            let occurrence = Occurrence(jobID: request.jobID, scheduledAt: request.requestedAt, manual: true)
            decision.effects.append(
                .emit(
                    RunEvent(
                        time: now, run: Self.runID(of: occurrence), job: request.jobID, kind: .disabled,
                        reason: "trigger refused: \(why)", occurrence: occurrence.scheduledAt)))
        }
        decision.answers.append(OperatorAnswer(request: request, result: result))
        begin(plan, now: now)
    }

    /// `retry`, `skip` or `cancel` of an occurrence: handed to its run when it is under way; a
    /// finished one is opened again from its stored snapshot when the request applies to it
    /// (`retry` of a failed one, `skip` of a failed one), as the job's running occurrence, so
    /// nothing else of the job runs beside it.
    private mutating func act(on request: OperatorRequest, finished: [String: RunSnapshot], now: Date) {
        func refuse(_ why: String) {
            decision.answers.append(OperatorAnswer(request: request, result: .refused(why)))
        }
        guard let runID = request.runID else { return refuse("the request names no occurrence") }
        if runID == main.run.id || occurrenceRuns[runID] != nil {
            return take([.operatorRequests([request], stored: false)], in: runID, now: now)
        }
        guard let snapshot = finished[runID], let jobID = snapshot.run.occurrenceOf,
            let date = snapshot.run.scheduledAt, timetable.contains(jobID), let definition = definition(jobID)
        else {
            return refuse("run \(runID) is no occurrence of a periodic job this runner schedules")
        }
        if timetable.isRunning(jobID) {
            return refuse(
                "an occurrence of \(jobID) is under way; \(request.kind.rawValue) --run \(runID) once it has ended"
            )
        }
        let occurrence = Occurrence(jobID: jobID, scheduledAt: date, manual: snapshot.run.manual == true)
        var (scheduler, opening) = Scheduler.resume(
            snapshot, plan: occurrencePlan(definition), runnerPID: options.runnerPID,
            suspended: main.suspensions, pendingRequests: [], options: options.scheduler,
            random: nextSource(), inputs: openingInputs(runID), now: now)
        let applied = scheduler.handle([.operatorRequests([request], stored: false)], now: now)
        guard case .applied = applied.answers.first?.result else {
            // Nothing to do to it: it stays as it was, closed.
            decision.answers += applied.answers
            return
        }
        decision.append(opening)
        decision.append(applied)
        timetable.resumed(occurrence)
        track(runID, occurrence, scheduler)
    }
}
