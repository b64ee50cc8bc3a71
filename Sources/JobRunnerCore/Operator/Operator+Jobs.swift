import Foundation

extension Operator {
    /// `retry`, `skip` or `cancel` of jobs: a job of the run `runID` (nil: the current run), or
    /// a periodic job's latest occurrence that ran (SPEC 5.12); asked of the runner at work, or
    /// applied here when none works.
    /// - Parameters:
    ///   - defaultJobs: the jobs to act on besides those named (`retry --failed`), each with its
    ///     run; nil: only those named.
    ///   - say: called with each line, as the command prints it.
    public func act(
        _ kind: OperatorRequest.Kind, jobs: [String], runID: String? = nil,
        defaultJobs: (@Sendable (RunSnapshot, [String: ScheduleRecord]) -> [(String, String)])? = nil,
        say: (Line) -> Void
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
                // The newest first: the run the reader most likely meant.
                let known =
                    (try? await reader.runs().sorted { ($0.startedAt, $0.id) > ($1.startedAt, $1.id) }
                        .prefix(5).map(\.id)) ?? []
                say(.problem("no run '\(id)' in \(place); recent runs: \(known.joined(separator: ", "))"))
                return .notFound(exitStatus: 1)
            }
            let targets: [(String, [String])]
            switch try await self.targets(
                kind, jobs: jobs, in: snapshot, explicitRun: runID != nil, defaultJobs: defaultJobs)
            {
            case .success(let found): targets = found
            case .failure(let problem):
                say(.problem(problem.words))
                return .notFound(exitStatus: 1)
            }
            if targets.isEmpty {
                say(.message("run \(snapshot.run.id) has no failed or cancelled job to \(kind.rawValue)"))
                return .done
            }
            var refused = false
            // Claimed once, by the first run this action changes itself.
            let claim = ClaimOnce(store: store)
            for (runID, names) in targets {
                let target = runID == snapshot.run.id ? snapshot : try await reader.snapshot(runID: runID)
                guard let target else {
                    say(.problem("run \(runID) was deleted meanwhile"))
                    return .notFound(exitStatus: 1)
                }
                switch try await act(kind, on: names, in: target, hold: hold, claim: claim, say: say) {
                case .done: break
                case .refused: refused = true
                case let other: return other
                }
            }
            return refused ? .refused : .done
        } catch {
            say(.problem("\(error)"))
            return .storeFailed
        }
    }

    /// A name that is neither a job of the run nor a periodic job with an occurrence that ran.
    private struct NoJob: Error {
        let words: String
    }

    /// The runs to act on, each with the jobs named in it, in the order first named: a job of
    /// `snapshot` (the current run, or the one asked for), else a periodic job's latest
    /// occurrence that ran.
    private func targets(
        _ kind: OperatorRequest.Kind, jobs: [String], in snapshot: RunSnapshot, explicitRun: Bool,
        defaultJobs: (@Sendable (RunSnapshot, [String: ScheduleRecord]) -> [(String, String)])?
    ) async throws(StoreError) -> Result<[(String, [String])], NoJob> {
        var named: [(String, String)] = jobs.map { ($0, "") }
        let schedules = try await reader.schedules()
        if let defaultJobs {
            named += defaultJobs(snapshot, schedules).filter { name, _ in !jobs.contains(name) }
        }
        var seen = Set<String>()
        named = named.filter { seen.insert($0.0).inserted }
        var order: [String] = []
        var byRun: [String: [String]] = [:]
        for (name, given) in named {
            var runID = given
            if runID.isEmpty {
                if snapshot.jobs[name] != nil {
                    runID = snapshot.run.id
                } else if !explicitRun, let (latest, ran) = try await reader.latestOccurrence(of: name), ran {
                    runID = latest.id
                } else {
                    return .failure(
                        NoJob(
                            words: noJob(
                                name, kind: kind, in: snapshot, explicitRun: explicitRun,
                                periodic: Array(schedules.keys))))
                }
            }
            if byRun[runID] == nil { order.append(runID) }
            byRun[runID, default: []].append(name)
        }
        return .success(order.map { ($0, byRun[$0] ?? []) })
    }

    /// What a name that is no job of the run nor a periodic job with an occurrence is.
    private func noJob(
        _ name: String, kind: OperatorRequest.Kind, in snapshot: RunSnapshot, explicitRun: Bool,
        periodic: [String]
    ) -> String {
        // A matrix job's own id, perhaps: its jobs are listed, not acted on (the run does not
        // say which ids are a matrix's).
        let matches = MatrixIDs.jobs(of: name, in: snapshot.run.jobIDs)
        if !matches.isEmpty {
            return "run \(snapshot.run.id) has "
                + MatrixIDs.choice(of: name, among: matches, command: kind.rawValue)
        }
        if explicitRun {
            return "run \(snapshot.run.id) has no job '\(name)'"
                + Self.hintOrList(for: name, in: snapshot.run.jobIDs)
        }
        if periodic.contains(name) { return "\(name) has no occurrence that ran yet" }
        return "no job '\(name)'" + Self.hintOrList(for: name, in: snapshot.run.jobIDs + periodic.sorted())
    }

    /// A did-you-mean for `name`, or, with none close enough, the first few ids it could have
    /// been, so the reader need not run `status` to find them.
    static func hintOrList(for name: String, in ids: [String]) -> String {
        let hint = Suggestion.hint(for: name, in: ids)
        guard hint.isEmpty, !ids.isEmpty else { return hint }
        let shown = ids.prefix(8).joined(separator: ", ")
        return "; the jobs are \(shown)\(ids.count > 8 ? " and \(ids.count - 8) more" : "")"
    }

    /// Applies the requests for `names` to one run: through the runner at work, else here.
    private func act(
        _ kind: OperatorRequest.Kind, on names: [String], in snapshot: RunSnapshot,
        hold: any OperatorLockHold,
        claim: ClaimOnce, say: (Line) -> Void
    ) async throws(StoreError) -> Outcome {
        let verb = kind.rawValue
        let runID = snapshot.run.id
        // An occurrence's requests go where every runner looks, whether it runs or has finished.
        let occurrence = snapshot.run.occurrenceOf != nil
        let key = occurrence ? OperatorRequest.periodicRequests : runID
        let base = UInt64(Date().timeIntervalSince1970 * 1_000_000_000)
        let requests = names.enumerated().map { index, name in
            OperatorRequest(
                id: base + UInt64(index), kind: kind, jobID: name, requestedAt: Date(),
                runID: occurrence ? runID : nil)
        }
        let which = occurrence ? " (occurrence \(runID))" : ""
        if hold.runnerWorks {
            // The runner stores its answers in the commit that takes the requests: read from
            // the events committed after this one.
            let since = try await reader.latestEventSequence()
            try await store.post(requests, runID: key)
            // Woken, the runner reads them at once; it also reads them whenever it starts.
            await waker.wakeRunner()
            let runner = hold.runnerPID.map { "the runner (pid \($0))" } ?? "the runner"
            guard try await runnerLeft(requests, in: key, say: say) else {
                let answers = try await self.answers(to: requests, after: since)
                var refused = false
                for request in requests {
                    let job = request.jobID
                    switch answers[request.id] {
                    case .applied(let what):
                        say(.message(occurrence ? "occurrence \(runID): \(what)" : what))
                    case .terminating:
                        say(
                            .message(
                                "\(job)\(which) \(kind == .cancel ? "cancelled" : "skipped"): \(runner) ends its running attempt"
                            ))
                    case .refused(let why):
                        say(.problem("cannot \(verb) \(job)\(which): \(why)"))
                        refused = true
                    case nil:
                        // Its answer was let go among many newer events: the request was taken.
                        say(.message("asked \(runner) to \(verb) \(job)\(which); it took the request"))
                    }
                }
                return refused ? .refused : .done
            }
            // It ended without them (its run had just closed): applied here instead, as no
            // runner can start while the operator lock is held.
            try await store.commit(requests.map { .deleteRequest(runID: key, id: $0.id) }, under: claim.get())
            say(.message("\(runner) ended before it took the request; applying it here"))
        }
        // No runner, and none starts while the operator lock is held: apply them here, in order.
        var refused = false
        // The run as the last request that changed it left it: reopened or closed.
        var changedRun: RunRecord?
        for request in requests {
            guard let current = try await reader.snapshot(runID: runID) else {
                say(.problem("run \(runID) was deleted meanwhile"))
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
                say(.problem("cannot \(verb) \(request.jobID)\(which): \(why)"))
                refused = true
            case .applied(let what):
                try await store.commit(decision.changes + decision.reports(masking: nil), under: claim.get())
                // A dead runner may have left the attempt's processes behind.
                for case .endAttempt(_, let jobID, let attempt, let pid, let startTime) in decision.effects {
                    await orphans.terminate(
                        Orphan(
                            runID: current.run.id, jobID: jobID, attempt: attempt, pid: pid,
                            startTime: startTime))
                }
                for case .putRun(let run) in decision.changes { changedRun = run }
                say(.message(occurrence ? "occurrence \(runID): \(what)" : what))
            case .terminating:
                refused = true
            }
        }
        if let changedRun {
            say(
                .message(
                    changedRun.state.isFinal
                        ? "run \(changedRun.id) \(changedRun.state.rawValue): every job is final"
                        : occurrence
                            ? "the next `jobrunner serve` or `jobrunner run` resumes occurrence \(changedRun.id)"
                            : "the next `jobrunner run` resumes run \(changedRun.id)"))
        }
        return refused ? .refused : .done
    }

    /// The runner's answers to `requests`, by request id, from the events committed after
    /// `sequence` (the runner stores them in the commit that takes the requests).
    private func answers(to requests: [OperatorRequest], after sequence: UInt64)
        async throws(StoreError) -> [UInt64: OperatorResult]
    {
        var wanted = Set(requests.map(\.id))
        var found: [UInt64: OperatorResult] = [:]
        var last = sequence
        while !wanted.isEmpty {
            let events = try await store.events(after: last, limit: 512)
            guard let newest = events.last else { break }
            for event in events {
                if case .answer(let answer) = event.change, wanted.remove(answer.request.id) != nil {
                    found[answer.request.id] = answer.result
                }
            }
            last = newest.sequence
        }
        return found
    }

    /// Whether the runner went away with `requests` still stored (under `key`), looked at a few
    /// times a second: a runner takes them as soon as it is woken (it reads them then, and when
    /// it starts), but one whose run has just closed exits without reading them, and a finished
    /// run is never resumed, so they would be lost. False once they are taken. A runner that
    /// has not taken them after ``slowRunnerNotice`` is said to be waited for.
    private func runnerLeft(_ requests: [OperatorRequest], in key: String, say: (Line) -> Void)
        async throws(StoreError) -> Bool
    {
        let ours = Set(requests.map(\.id))
        let notice = ContinuousClock.now + slowRunnerNotice
        var told = false
        while true {
            // Read after the lock: a runner that took them and then ended leaves none stored.
            let gone = !(await reader.runnerWorks())
            let stored = try await reader.requests(runID: key).contains { ours.contains($0.id) }
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

    // MARK: Trigger

    /// `trigger`: an occurrence of each periodic job now, outside its schedule (SPEC 5.12),
    /// through ``PeriodicTrigger``.
    public func trigger(_ jobs: [String], say: @Sendable (Line) -> Void) async -> Outcome {
        do {
            var seen = Set<String>()
            let names = jobs.filter { seen.insert($0).inserted }
            var oneShot: [String] = []
            if let current = try await reader.currentRunID() {
                oneShot = try await reader.run(current)?.jobIDs ?? []
            }
            let schedules = try await reader.schedules()
            if let problem = PeriodicTrigger.problem(
                with: names, periodic: Array(schedules.keys), oneShot: oneShot)
            {
                say(.problem(problem))
                // A one-shot job exists: triggering it is refused, not a job not found.
                let periodic = Set(schedules.keys)
                let unknown = names.contains { !periodic.contains($0) && !oneShot.contains($0) }
                return unknown ? .notFound(exitStatus: 1) : .refused
            }
            var refused = false
            // With no runner, a request is stored for the next one, which first resumes the
            // occurrences left unfinished (one `retry` reopened, say): what it will answer then is
            // said now, rather than a promise it breaks.
            var notes: [String: String] = [:]
            var accepted = names
            if !(await reader.runnerWorks()) {
                let unfinished = try await reader.runs().filter {
                    $0.occurrenceOf != nil && !$0.state.isFinal
                }
                for name in names {
                    guard let open = unfinished.last(where: { $0.occurrenceOf == name }) else { continue }
                    switch schedules[name]?.overlap {
                    case .skip:
                        say(
                            .problem(
                                "cannot trigger \(name): occurrence \(open.id) is unfinished, the next runner resumes it first, and under overlap: skip a trigger while it runs is refused; let it finish, or `jobrunner cancel \(name)` first"
                            ))
                        refused = true
                        accepted.removeAll { $0 == name }
                    case .queue:
                        notes[name] =
                            "; it waits behind occurrence \(open.id), which that runner resumes first"
                    case .replace:
                        notes[name] = "; it replaces occurrence \(open.id), which that runner resumes first"
                    case nil:
                        notes[name] =
                            "; occurrence \(open.id) is unfinished and is resumed first: under overlap: skip (the default) the trigger is then refused"
                    }
                }
            }
            if accepted.isEmpty { return .refused }
            let outcomes = try await PeriodicTrigger.trigger(accepted, reader: reader, waker: waker) { pid in
                say(.notice("waiting for the runner\(pid.map { " (pid \($0))" } ?? "") to take the request"))
            }
            for (job, outcome) in outcomes {
                switch outcome {
                case .started(let runID):
                    say(.message("triggered \(job): occurrence \(runID)"))
                case .queued(let runID):
                    say(.message("triggered \(job): occurrence \(runID) waits behind the running one"))
                case .stored(let runID):
                    say(
                        .message(
                            "stored: no runner works on \(place); the next `jobrunner serve` or `jobrunner run` starts \(job) first (occurrence \(runID))\(notes[job] ?? "")"
                        ))
                case .refused(let why):
                    say(.problem("cannot trigger \(job): \(why)"))
                    refused = true
                }
            }
            return refused ? .refused : .done
        } catch {
            say(.problem("\(error)"))
            return .storeFailed
        }
    }
}

/// The claim an action commits under, taken the first time it is needed, once no runner works
/// on the store (none can start while the operator lock is held).
final class ClaimOnce: @unchecked Sendable {
    // @unchecked: used by one action, from one task at a time.
    private let store: any QueueStore
    private var claim: StoreClaim?

    init(store: any QueueStore) { self.store = store }

    func get() async throws(StoreError) -> StoreClaim {
        if let claim { return claim }
        let taken = try await store.claim(owner: "operator \(getpid())")
        claim = taken
        return taken
    }
}
