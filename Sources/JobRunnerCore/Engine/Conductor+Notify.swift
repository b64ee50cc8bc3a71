import Foundation

/// `notify:` hooks (SPEC 5.13): a hook that falls due is stored in the commit that finishes its
/// run (an ``OperatorRequest`` of kind `notify` under ``OperatorRequest/notifyRequests``, which
/// every runner reads when it starts), delivered once that commit is durable, and deleted once
/// delivered: a runner killed in between leaves it stored, and the next one delivers it (at
/// least once). It never changes the run's state.
extension Conductor {
    /// Stores and delivers each hook due for `run`, which this decision finishes.
    mutating func notifyIfDue(_ run: RunRecord, now: Date) {
        for hook in workload.notify
        where hook.isDue(for: run.state, occurrenceOf: run.occurrenceOf, jobIDs: run.jobIDs) {
            notifySequence &+= 1
            let base = UInt64(max(0, now.timeIntervalSince1970) * 1000) &* 1000
            let request = OperatorRequest(
                id: base &+ notifySequence % 1000, kind: .notify, jobID: hook.name, requestedAt: now,
                runID: run.id)
            decision.changes.append(.putRequest(runID: OperatorRequest.notifyRequests, request))
            deliver(request, now: now)
        }
    }

    /// Delivers a stored hook: its events, and the delivery itself once durable.
    mutating func deliver(_ request: OperatorRequest, now: Date) {
        guard delivering.insert(request.id).inserted else { return }
        decision.effects.append(
            .emit(RunEvent(time: now, run: request.runID ?? "", kind: .notifyStarted, hook: request.jobID)))
        decision.effects.append(.notify(request))
    }

    /// A hook's delivery ended (after its attempts): deleted from the store, and reported.
    mutating func notified(_ request: OperatorRequest, failure: String?, now: Date) {
        delivering.remove(request.id)
        decision.changes.append(.deleteRequest(runID: OperatorRequest.notifyRequests, id: request.id))
        decision.effects.append(
            .emit(
                RunEvent(
                    time: now, run: request.runID ?? "",
                    kind: failure == nil ? .notifySucceeded : .notifyFailed,
                    reason: failure, hook: request.jobID)))
    }

    /// The hook of a stored delivery, as last loaded; nil when the files no longer have it.
    public func hook(_ name: String) -> NotifyHook? { workload.notify.first { $0.name == name } }
}
