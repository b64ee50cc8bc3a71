import Foundation
import JobRunnerCore
import Testing

/// The contract's cases about ownership (claims) and the committed events.
extension StoreContract {
    /// Only the latest claim's commits are taken: one under an earlier claim fails with
    /// `staleClaim` and changes nothing, and makes no event.
    static func aStaleClaimIsRefusedAndWritesNothing(_ store: any QueueStore) async throws {
        let first = try await store.claim(owner: "runner 1")
        let run = RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1)
        try await store.commit([.putRun(run), .setCurrentRun("R")], under: first)
        let second = try await store.claim(owner: "runner 2")
        #expect(second.fencing > first.fencing)
        let events = try await store.latestEventSequence()

        var closed = run
        closed.state = .failed
        let refused = await #expect(throws: StoreError.self) {
            try await store.commit(
                [.putRun(closed), .putJob(runID: "R", JobRecord(jobID: "a", pipeline: "p"))], under: first)
        }
        #expect(refused?.code == .staleClaim)
        #expect(refused?.message.contains("runner 2") == true, "says who holds the store now")
        #expect(try await store.run(id: "R")?.state == .running, "nothing of the refused commit is written")
        #expect(try await store.snapshot(runID: "R")?.jobs.isEmpty == true)
        #expect(try await store.latestEventSequence() == events, "a refused commit makes no event")

        // The new owner's commit goes through, and so does a batch beside a refused one.
        async let stale: Result<Void, StoreError> = withCheckedContinuation { continuation in
            store.submit([.putRun(closed)], under: first) { continuation.resume(returning: $0) }
        }
        try await store.commit([.putJob(runID: "R", JobRecord(jobID: "a", pipeline: "p"))], under: second)
        if case .failure(let error) = await stale {
            #expect(error.code == .staleClaim)
        } else {
            Issue.record("a commit under a stale claim was taken")
        }
        #expect(try await store.run(id: "R")?.state == .running)
        #expect(try await store.snapshot(runID: "R")?.jobs.keys.sorted() == ["a"])
    }

    /// Requests, suspend counts and pruning belong to nobody: they need no claim, and a newer
    /// claim does not stop them.
    static func writesThatBelongToNobodyNeedNoClaim(_ store: any QueueStore) async throws {
        let owner = try await store.claim(owner: "runner")
        let done = RunRecord(id: "old", state: .succeeded, startedAt: start, jobIDs: [], runnerPID: 1)
        try await store.commit([.putRun(done)], under: owner)
        _ = try await store.claim(owner: "another runner")
        let request = OperatorRequest(id: 7, kind: .skip, jobID: "a", requestedAt: start)
        try await store.post([request], runID: "R")
        #expect(try await store.requests(runID: "R") == [request])
        let record = try await store.updatePipeline("p") { $0.suspended += 2 }
        #expect(record.suspended == 2)
        #expect(try await store.pipelines()["p"]?.suspended == 2)
        try await store.prune(runs: ["old"])
        #expect(try await store.runs().isEmpty)
    }

    /// Each commit's changes come back as events, numbered on from the last commit's, in the
    /// order they were made; attempts and outputs make none of their own.
    static func commitsAreEventsNumberedInOrder(_ store: any QueueStore) async throws {
        #expect(try await store.latestEventSequence() == 0)
        #expect(try await store.events(after: 0, limit: 10).isEmpty)
        let run = RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1)
        try await store.commitAsNewOwner([
            .putRun(run), .setCurrentRun("R"),
            .putJob(runID: "R", JobRecord(jobID: "a", pipeline: "p", state: .running, attempts: 1)),
            .putAttempt(runID: "R", AttemptRecord(jobID: "a", number: 1, startedAt: start)),
            .putOutputs(runID: "R", jobID: "a", occurrence: "", ["k": "v"]),
        ])
        try await store.post(
            [OperatorRequest(id: 3, kind: .cancel, jobID: "a", requestedAt: start)], runID: "R")
        _ = try await store.updatePipeline("p") { $0.suspended = 1 }
        try await store.commitAsNewOwner([
            .deleteRequest(runID: "R", id: 3),
            .putSchedule(ScheduleRecord(jobID: "tick", anchor: start, schedule: "every 1m")),
        ])
        try await store.prune(runs: ["R"])

        let events = try await store.events(after: 0, limit: 100)
        #expect(events.map(\.sequence) == Array(1...8))
        #expect(
            events.map(\.change) == [
                .run(id: "R", state: .running), .currentRun(id: "R"),
                .job(runID: "R", jobID: "a", state: .running, attempts: 1),
                .requestPosted(runID: "R", id: 3, kind: .cancel, jobID: "a"),
                .pipeline(name: "p", suspended: 1),
                .requestTaken(runID: "R", id: 3), .schedule(jobID: "tick"),
                .runDeleted(id: "R"),
            ])
        #expect(try await store.latestEventSequence() == 8)
        #expect(events[0].committedAt == events[2].committedAt, "one commit, one date")
    }

    /// Events are read after a sequence number, in pages, the way a reader resumes.
    static func aReaderResumesAfterTheLastEventItSaw(_ store: any QueueStore) async throws {
        for name in ["a", "b", "c"] {
            try await store.commitAsNewOwner([
                .putPipeline(PipelineRecord(name: name, suspended: 1)),
                .putPipeline(PipelineRecord(name: name, suspended: 2)),
            ])
        }
        #expect(try await store.events(after: 2, limit: 3).map(\.sequence) == [3, 4, 5])
        #expect(try await store.events(after: 3, limit: 100).map(\.sequence) == [4, 5, 6])
        #expect(try await store.events(after: 6, limit: 100).isEmpty)
        #expect(try await store.events(after: 1, limit: 0).isEmpty)
        let reader = ReadModel(store: store, lock: nil, logs: LogLocation(stateDirectory: "/nowhere"))
        var seen: [CommittedEvent.Change] = []
        for try await event in reader.events(after: 4) {
            seen.append(event.change)
            if event.sequence == 6 { break }
        }
        #expect(seen == [.pipeline(name: "c", suspended: 1), .pipeline(name: "c", suspended: 2)])
    }

    /// A reader following the events is woken by the commit that comes after it started
    /// waiting: nothing is polled for by the test.
    static func aFollowerIsWokenByTheNextCommit(_ store: any QueueStore) async throws {
        try await store.commitAsNewOwner([.putPipeline(PipelineRecord(name: "before"))])
        let reader = ReadModel(store: store, lock: nil, logs: LogLocation(stateDirectory: "/nowhere"))
        let latest = try await reader.latestEventSequence()
        let follower = Task {
            var iterator = reader.events(after: latest).makeAsyncIterator()
            return try await iterator.next()
        }
        // Committed while the follower waits, or before its first read: either way it sees it.
        try await store.commitAsNewOwner([.putPipeline(PipelineRecord(name: "after", suspended: 3))])
        let event = try #require(try await follower.value)
        #expect(event.sequence == latest + 1)
        #expect(event.change == .pipeline(name: "after", suspended: 3))

        // A follower cancelled while it waits ends without an event.
        let cancelled = Task { () -> CommittedEvent? in
            var iterator = reader.events(after: latest + 1).makeAsyncIterator()
            return try await iterator.next()
        }
        cancelled.cancel()
        #expect(try await cancelled.value == nil)
    }

    /// A store keeps the latest ``CommittedEvent/kept`` events; a reader that asks for older
    /// ones is told they were let go, then reads on.
    static func theOldestEventsGoBeyondThoseKept(_ store: any QueueStore) async throws {
        try await store.commitAsNewOwner([.putPipeline(PipelineRecord(name: "first"))])
        let many = (0..<Int(CommittedEvent.kept)).map {
            StoreChange.putPipeline(PipelineRecord(name: "p", suspended: $0))
        }
        try await store.commitAsNewOwner(many)
        let latest = try await store.latestEventSequence()
        #expect(latest == CommittedEvent.kept + 1)
        let oldest = try #require(try await store.events(after: 0, limit: 1).first)
        #expect(oldest.sequence == 2, "the first event was let go")
        let reader = ReadModel(store: store, lock: nil, logs: LogLocation(stateDirectory: "/nowhere"))
        var iterator = reader.events(after: 0).makeAsyncIterator()
        #expect(try await iterator.next()?.change == .missed(through: 1))
        #expect(try await iterator.next()?.change == .pipeline(name: "p", suspended: 0))
    }

    /// The `--events` documents and the operator answers a commit reports come back among its
    /// events, in place, every member kept, and make no row of their own; a schedule record keeps
    /// its `overlap`.
    static func reportedEventsAndAnswersAreKeptAmongTheEvents(_ store: any QueueStore) async throws {
        let event = RunEvent(
            time: start, run: "R", job: "a", attempt: 2, kind: .retrying, reason: "exit 1", exitCode: 1,
            delay: .seconds(1.5), key: "k", value: "v", state: "s", pipeline: "p",
            occurrence: start.addingTimeInterval(60), hook: "h")
        let request = OperatorRequest(id: 7, kind: .skip, jobID: "a", requestedAt: start, runID: "R")
        let answers = [
            OperatorAnswer(request: request, result: .applied("skipped")),
            OperatorAnswer(request: request, result: .terminating(jobID: "a")),
            OperatorAnswer(request: request, result: .refused("it has ended")),
        ]
        var schedule = ScheduleRecord(jobID: "tick", anchor: start, schedule: "every 1m")
        schedule.overlap = .replace
        try await store.commitAsNewOwner([
            .putPipeline(PipelineRecord(name: "p")), .recordEvents([event]),
            .recordAnswers(answers), .putSchedule(schedule),
        ])
        let events = try await store.events(after: 0, limit: 100)
        #expect(
            events.map(\.change)
                == [.pipeline(name: "p", suspended: 0), .event(event)]
                + answers.map(CommittedEvent.Change.answer)
                + [.schedule(jobID: "tick")])
        #expect(events.map(\.sequence) == Array(1...6))
        #expect(try await store.currentRunID() == nil, "events make no run")
        #expect(try await store.schedules()["tick"]?.overlap == .replace)
    }
}
