import Foundation

extension Operator {
    /// `retry`, `skip` or `cancel` of jobs of a run (the current one when `runID` is nil): asked
    /// of the runner at work, or applied here when none works.
    /// - Parameters:
    ///   - defaultJobs: the jobs to act on besides those named (`retry --failed`); nil: none.
    ///   - say: called with each line, as the command prints it.
    public func act(
        _ kind: OperatorRequest.Kind, jobs: [String], runID: String? = nil,
        defaultJobs: (@Sendable (RunSnapshot) -> [String])? = nil, say: (Line) -> Void
    ) async -> Outcome {
        // Taken first: what follows is decided on the run as it is once no other operator
        // command changes it and no runner can start.
        let hold: any OperatorLockHold
        do {
            hold = try await lock.lockForOperator {
                say(.notice("waiting for another jobrunner command to finish with \(place)"))
            }
        } catch {
            say(.problem("\(error)"))
            return .storeFailed
        }
        defer { withExtendedLifetime(hold) {} }
        do {
            return try await act(
                kind, jobs: jobs, runID: runID, defaultJobs: defaultJobs, hold: hold, say: say)
        } catch {
            say(.problem("\(error)"))
            return .storeFailed
        }
    }

    private func act(
        _ kind: OperatorRequest.Kind, jobs: [String], runID: String?,
        defaultJobs: (@Sendable (RunSnapshot) -> [String])?, hold: any OperatorLockHold, say: (Line) -> Void
    ) async throws(StoreError) -> Outcome {
        let id: String
        if let runID {
            id = runID
        } else if let current = try await reader.currentRunID() {
            id = current
        } else {
            say(.problem("no runs yet in \(place)"))
            return .notFound(exitStatus: 1)
        }
        guard let snapshot = try await reader.snapshot(runID: id) else {
            let known = (try? await reader.runs().map(\.id).suffix(5)) ?? []
            say(.problem("no run '\(id)' in \(place); recent runs: \(known.joined(separator: ", "))"))
            return .notFound(exitStatus: 1)
        }
        let verb = kind.rawValue
        var names = jobs
        if let defaultJobs {
            names += defaultJobs(snapshot).filter { !names.contains($0) }
            if names.isEmpty {
                say(.message("run \(snapshot.run.id) has no failed or cancelled job to \(verb)"))
                return .done
            }
        }
        var seen = Set<String>()
        names = names.filter { seen.insert($0).inserted }
        for name in names where snapshot.jobs[name] == nil {
            // A matrix job's own id, perhaps: its jobs are listed, not acted on (the run does
            // not say which ids are a matrix's).
            let matches = MatrixIDs.jobs(of: name, in: snapshot.run.jobIDs)
            say(
                .problem(
                    "run \(snapshot.run.id) "
                        + (matches.isEmpty
                            ? "has no job '\(name)'" + Suggestion.hint(for: name, in: snapshot.run.jobIDs)
                            : "has " + MatrixIDs.choice(of: name, among: matches, command: verb))))
            return .notFound(exitStatus: 1)
        }
        let base = UInt64(Date().timeIntervalSince1970 * 1_000_000_000)
        let requests = names.enumerated().map { index, name in
            OperatorRequest(id: base + UInt64(index), kind: kind, jobID: name, requestedAt: Date())
        }
        // What this action changes itself it changes under a claim of its own, taken once no
        // runner works on the run (none can start while the operator lock is held).
        var claim: StoreClaim?
        func owned() async throws(StoreError) -> StoreClaim {
            if let claim { return claim }
            let taken = try await store.claim(owner: "operator \(getpid())")
            claim = taken
            return taken
        }
        if hold.runnerWorks {
            try await store.post(requests, runID: snapshot.run.id)
            // Woken, the runner reads them at once; it also reads them whenever it starts.
            await waker.wakeRunner()
            let runner = hold.runnerPID.map { "the runner (pid \($0))" } ?? "the runner"
            guard try await runnerLeft(requests, in: snapshot.run.id, say: say) else {
                say(.message("asked \(runner) to \(verb) \(names.joined(separator: ", "))"))
                return .done
            }
            // It ended without them (its run had just closed): applied here instead, as no
            // runner can start while the operator lock is held.
            try await store.commit(
                requests.map { .deleteRequest(runID: snapshot.run.id, id: $0.id) }, under: owned())
            say(.message("\(runner) ended before it took the request; applying it here"))
        }
        // No runner, and none starts while the operator lock is held: apply them here, in order.
        var refused = false
        // The run as the last request that changed it left it: reopened or closed.
        var changedRun: RunRecord?
        for request in requests {
            guard let current = try await reader.snapshot(runID: snapshot.run.id) else {
                say(.problem("run \(snapshot.run.id) was deleted meanwhile"))
                return .notFound(exitStatus: 1)
            }
            let (result, decision) = OfflineOperator.apply(request, to: current, now: Date())
            switch result {
            case .refused(let why):
                // An earlier job of the same action reopened this one already (the jobs it
                // blocked come with it).
                if kind == .retry, snapshot.jobs[request.jobID]?.state.isFinal == true,
                    current.jobs[request.jobID]?.state.isFinal == false
                {
                    say(.message("\(request.jobID) gets another chance, with any jobs it blocked"))
                    continue
                }
                say(.problem("cannot \(verb) \(request.jobID): \(why)"))
                refused = true
            case .applied(let what):
                try await store.commit(decision.changes, under: owned())
                // A dead runner may have left the attempt's processes behind.
                for case .endAttempt(_, let jobID, let attempt, let pid, let startTime) in decision.effects {
                    await orphans.terminate(
                        Orphan(
                            runID: current.run.id, jobID: jobID, attempt: attempt, pid: pid,
                            startTime: startTime))
                }
                for case .putRun(let run) in decision.changes { changedRun = run }
                say(.message(what))
            case .terminating:
                refused = true
            }
        }
        if let changedRun {
            say(
                .message(
                    changedRun.state.isFinal
                        ? "run \(changedRun.id) \(changedRun.state.rawValue): every job is final"
                        : "the next `jobrunner run` resumes run \(changedRun.id)"))
        }
        return refused ? .refused : .done
    }

    /// Whether the runner went away with `requests` still stored, looked at a few times a
    /// second: a runner takes them as soon as it is woken (it reads them then, and when it
    /// starts), but one whose run has just closed exits without reading them, and a finished
    /// run is never resumed, so they would be lost. False once they are taken. A runner that
    /// has not taken them after ``slowRunnerNotice`` is said to be waited for.
    private func runnerLeft(_ requests: [OperatorRequest], in runID: String, say: (Line) -> Void)
        async throws(StoreError) -> Bool
    {
        let ours = Set(requests.map(\.id))
        let notice = ContinuousClock.now + slowRunnerNotice
        var told = false
        while true {
            // Read after the lock: a runner that took them and then ended leaves none stored.
            let gone = !(await reader.runnerWorks())
            let stored = try await reader.requests(runID: runID).contains { ours.contains($0.id) }
            if !stored { return false }
            if gone { return true }
            if !told && ContinuousClock.now >= notice {
                let pid = await reader.runnerPID().map { " (pid \($0))" } ?? ""
                say(.notice("waiting for the runner\(pid) to take the request"))
                told = true
            }
            do {
                try await Task.sleep(for: .milliseconds(20))
            } catch {
                // Cancelled: the request stays stored; the runner takes it when it looks.
                return false
            }
        }
    }
}
