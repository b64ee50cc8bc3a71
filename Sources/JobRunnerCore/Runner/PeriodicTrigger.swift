import Foundation

/// `jobrunner trigger JOB…` (SPEC 5.12): an occurrence of each named periodic job now, outside
/// its schedule, for the command line and the HTTP API alike.
///
/// The request is stored (``OperatorRequest/periodicRequests``) and the runner at work is woken;
/// it takes the request within a second (it looks at the store every second anyway), decides
/// with the job's `overlap` (``Timetable/trigger(_:at:)``) and deletes the request in the commit
/// that stores what became of it. So once the request is gone, the store says the answer: the
/// occurrence's run (its id is made from the job and the request's time), its place in the
/// job's queue, or neither (refused). With no runner the request waits for the next `serve` or
/// `run`, which starts it first.
public enum PeriodicTrigger {
    /// What became of one job's trigger.
    public enum Outcome: Sendable, Hashable {
        /// The runner started the occurrence: its run.
        case started(runID: String)
        /// It waits behind the running occurrence (`overlap: queue` or `replace`), or for its
        /// needs.
        case queued(runID: String)
        /// Stored: no runner works on the store; the next `serve` or `run` starts it first.
        case stored(runID: String)
        /// Nothing starts; the words say why.
        case refused(String)

        /// Whether the command fails (exit 1).
        public var isRefused: Bool { if case .refused = self { true } else { false } }
    }

    /// Why a name cannot be triggered, before anything is stored: a one-shot job or an unknown
    /// id, with a "did you mean" among the periodic jobs the store knows; nil when every name
    /// is a periodic job.
    /// - Parameters:
    ///   - periodic: the periodic jobs the store knows (their schedule records).
    ///   - oneShot: the jobs of the current run of one-shot jobs.
    public static func problem(with names: [String], periodic: [String], oneShot: [String]) -> String? {
        let known = periodic.sorted()
        for name in names where !known.contains(name) {
            let listed =
                known.isEmpty
                ? " (no periodic job has been scheduled here yet)"
                : " (periodic: \(known.joined(separator: ", ")))"
            if oneShot.contains(name) {
                return "\(name) is a one-shot job: `trigger` starts occurrences of periodic jobs"
                    + Suggestion.hint(for: name, in: known) + listed
            }
            return "no periodic job '\(name)'" + Suggestion.hint(for: name, in: known) + listed
        }
        return nil
    }

    /// Triggers each job (checked with ``problem(with:periodic:oneShot:)`` first) and says
    /// what became of it.
    /// - Parameters:
    ///   - waker: wakes the runner at work.
    ///   - slowRunner: called once when the runner has not taken the requests after
    ///     ``slowRunnerNotice``, with its pid if known.
    public static func trigger(
        _ names: [String], reader: ReadModel, waker: any RunnerWaker, now: Date = Date(),
        slowRunner: @Sendable (Int32?) -> Void = { _ in }
    ) async throws(StoreError) -> [(job: String, outcome: Outcome)] {
        let base = UInt64(now.timeIntervalSince1970 * 1_000_000_000)
        let requests = names.enumerated().map { index, name in
            OperatorRequest(id: base + UInt64(index), kind: .trigger, jobID: name, requestedAt: now)
        }
        try await reader.store.post(requests, runID: OperatorRequest.periodicRequests)
        await waker.wakeRunner()
        let ours = Set(requests.map(\.id))
        let notice = ContinuousClock.now + slowRunnerNotice
        var told = false
        var left: Set<UInt64> = ours
        while !left.isEmpty {
            // Read after the runner's presence: one that took them and then ended leaves none.
            let works = await reader.runnerWorks()
            let stored = Set(try await reader.requests(runID: OperatorRequest.periodicRequests).map(\.id))
            left = ours.intersection(stored)
            if left.isEmpty || !works { break }
            if !told && ContinuousClock.now >= notice {
                slowRunner(await reader.runnerPID())
                told = true
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        var outcomes: [(String, Outcome)] = []
        let schedules = try await reader.schedules()
        for request in requests {
            let runID = Conductor.runID(
                of: Occurrence(jobID: request.jobID, scheduledAt: request.requestedAt, manual: true))
            if left.contains(request.id) {
                outcomes.append((request.jobID, .stored(runID: runID)))
            } else if try await reader.run(runID) != nil {
                outcomes.append((request.jobID, .started(runID: runID)))
            } else if schedules[request.jobID]?.waiting.contains(request.requestedAt) == true {
                outcomes.append((request.jobID, .queued(runID: runID)))
            } else {
                outcomes.append(
                    (request.jobID, .refused(try await refusal(of: request.jobID, reader: reader))))
            }
        }
        return outcomes
    }

    /// When the command says it still waits for the runner.
    public static var slowRunnerNotice: Duration { .seconds(3) }

    /// Why the runner refused: an occurrence still runs (`overlap: skip`), or the runner does not
    /// schedule the job (its job files no longer have it).
    private static func refusal(of jobID: String, reader: ReadModel) async throws(StoreError) -> String {
        let running = try await reader.runs().contains { $0.occurrenceOf == jobID && !$0.state.isFinal }
        return running
            ? "an occurrence of \(jobID) still runs (overlap: skip)"
            : "the runner does not schedule \(jobID): its job files no longer have it, or it is disabled"
    }
}
