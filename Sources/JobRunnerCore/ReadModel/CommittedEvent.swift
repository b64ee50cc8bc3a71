import Foundation
import JobRunnerJSON

/// One thing a commit changed, numbered in commit order: what a reader (`status` pages, the
/// HTTP API's event stream) follows, and resumes from by its sequence number, as an SSE client
/// resumes with `Last-Event-ID`.
///
/// A store records the events of a commit in the same transaction as its changes, so an event
/// is there exactly when its change is. Sequence numbers are consecutive across commits and
/// processes; a store keeps only the latest ``kept`` events.
public struct CommittedEvent: Sendable, Hashable {
    /// Consecutive, from 1; a later commit's events have higher numbers.
    public var sequence: UInt64
    /// When the commit was made.
    public var committedAt: Date
    public var change: Change

    public init(sequence: UInt64, committedAt: Date, change: Change) {
        self.sequence = sequence
        self.committedAt = committedAt
        self.change = change
    }

    /// What changed. An attempt or an output makes no event of its own: the job's event that
    /// comes with it carries the attempt count, and the read model has the rest.
    public enum Change: Sendable, Hashable {
        /// A run was stored: opened, closed, reopened by an operator.
        case run(id: String, state: RunState)
        /// A run became the current one.
        case currentRun(id: String)
        /// A new run's jobs were stored, `count` of them, all in their first state.
        case jobsOpened(runID: String, count: Int)
        /// A job's record changed.
        case job(runID: String, jobID: String, state: JobState, attempts: Int)
        /// A pipeline's suspend count changed.
        case pipeline(name: String, suspended: Int)
        /// A periodic job's schedule record changed.
        case schedule(jobID: String)
        /// An operator asked a run's runner to retry, skip or cancel a job.
        case requestPosted(runID: String, id: UInt64, kind: OperatorRequest.Kind, jobID: String)
        /// A request was taken (applied) and deleted.
        case requestTaken(runID: String, id: UInt64)
        /// A finished run was deleted (pruned) with its rows.
        case runDeleted(id: String)
        /// Events up to `through` were let go before this reader read them: the reader reads
        /// the state afresh through the read model (only ever made by a reader, never stored).
        case missed(through: UInt64)
        /// An event of SPEC 5.10 that the commit reports, as `--events` writes it
        /// (``StoreChange/recordEvents(_:)``).
        case event(RunEvent)
        /// What became of an operator request the commit took (``StoreChange/recordAnswers(_:)``).
        case answer(OperatorAnswer)
    }

    /// How many events a store keeps; the oldest go first.
    public static let kept: UInt64 = 100_000

    /// The events a change makes, in order.
    public static func changes(of change: StoreChange) -> [Change] {
        switch change {
        case .recordEvents(let events): events.map(Change.event)
        case .recordAnswers(let answers): answers.map(Change.answer)
        default: Self.change(of: change).map { [$0] } ?? []
        }
    }

    /// The event a change of one row makes, if any.
    private static func change(of change: StoreChange) -> Change? {
        switch change {
        case .recordEvents, .recordAnswers: nil
        case .putRun(let run): .run(id: run.id, state: run.state)
        case .setCurrentRun(let id): .currentRun(id: id)
        case .putJob(let runID, let job):
            .job(runID: runID, jobID: job.jobID, state: job.state, attempts: job.attempts)
        case .putNewJobs(let jobs): .jobsOpened(runID: jobs.runID, count: jobs.count)
        case .putAttempt, .putOutputs: nil
        case .putPipeline(let pipeline): .pipeline(name: pipeline.name, suspended: pipeline.suspended)
        case .putRequest(let runID, let request):
            .requestPosted(runID: runID, id: request.id, kind: request.kind, jobID: request.jobID)
        case .deleteRequest(let runID, let id): .requestTaken(runID: runID, id: id)
        case .putSchedule(let record): .schedule(jobID: record.jobID)
        case .deleteRun(let id): .runDeleted(id: id)
        }
    }
}

// MARK: Stored form

extension CommittedEvent {
    /// The events of one commit in the form a store keeps them: a JSON object with the commit's
    /// date and its events in order, written directly (it is written on every commit of a run)
    /// and read back by `JSONDecoder`.
    public struct Batch: Sendable {
        /// The stored bytes.
        public private(set) var bytes: [UInt8] = []
        /// How many events they hold.
        public private(set) var count = 0
        private var json: JSONWriter

        /// Starts the events of a commit made at `date`.
        public init(committedAt date: Date) {
            json = JSONWriter(capacity: 512)
            json.beginObject()
            json.member("at", date)
            json.key("events")
            json.beginArray()
        }

        /// Adds the event of `change`, if it makes one.
        public mutating func add(_ change: StoreChange) {
            switch change {
            case .putRun(let run):
                item("run") {
                    $0.member("run", run.id)
                    $0.member("state", run.state.rawValue)
                }
            case .setCurrentRun(let id):
                item("current") { $0.member("run", id) }
            case .putJob(let runID, let job):
                item("job") {
                    $0.member("run", runID)
                    $0.member("job", job.jobID)
                    $0.member("state", job.state.rawValue)
                    $0.member("n", job.attempts)
                }
            case .putNewJobs(let jobs):
                item("opened") {
                    $0.member("run", jobs.runID)
                    $0.member("n", jobs.count)
                }
            case .putAttempt, .putOutputs:
                return
            case .putPipeline(let pipeline):
                item("pipeline") {
                    $0.member("name", pipeline.name)
                    $0.member("n", pipeline.suspended)
                }
            case .putRequest(let runID, let request):
                item("request") {
                    $0.member("run", runID)
                    $0.member("id", request.id)
                    $0.member("kind", request.kind.rawValue)
                    $0.member("job", request.jobID)
                }
            case .deleteRequest(let runID, let id):
                item("taken") {
                    $0.member("run", runID)
                    $0.member("id", id)
                }
            case .putSchedule(let record):
                item("schedule") { $0.member("job", record.jobID) }
            case .deleteRun(let id):
                item("deleted") { $0.member("run", id) }
            case .recordEvents(let events):
                for event in events { add(event) }
            case .recordAnswers(let answers):
                for answer in answers { add(answer) }
            }
        }

        private mutating func add(_ event: RunEvent) {
            item("ev") {
                $0.member("time", event.time)
                $0.member("run", event.run)
                $0.member("job", event.job)
                $0.member("n", event.attempt)
                $0.member("kind", event.kind.rawValue)
                $0.member("reason", event.reason)
                $0.member("code", event.exitCode)
                $0.member("delay", event.delay.map(\.seconds))
                $0.member("key", event.key)
                $0.member("value", event.value)
                $0.member("state", event.state)
                $0.member("name", event.pipeline)
                $0.member("at", event.occurrence)
                $0.member("hook", event.hook)
            }
        }

        private mutating func add(_ answer: OperatorAnswer) {
            let request = answer.request
            item("answer") {
                $0.member("id", request.id)
                $0.member("kind", request.kind.rawValue)
                $0.member("job", request.jobID)
                $0.member("time", request.requestedAt)
                $0.member("run", request.runID)
                switch answer.result {
                case .applied(let words):
                    $0.member("state", "applied")
                    $0.member("reason", words)
                case .terminating(let jobID):
                    $0.member("state", "terminating")
                    $0.member("reason", jobID)
                case .refused(let words):
                    $0.member("state", "refused")
                    $0.member("reason", words)
                }
            }
        }

        private mutating func item(_ type: String, _ members: (inout JSONWriter) -> Void) {
            json.beginObject()
            json.member("t", type)
            members(&json)
            json.endObject()
            count += 1
        }

        /// The finished bytes.
        public mutating func finish() -> [UInt8] {
            json.endArray()
            json.endObject()
            bytes = json.drain()
            return bytes
        }
    }

    /// Reads back a stored batch (``Batch``) whose last event has the number `last`.
    /// - Throws: when the bytes are not such a batch (a damaged store).
    public static func events(inBatch bytes: [UInt8], last: UInt64) throws -> [CommittedEvent] {
        let batch = try JSONDecoder().decode(StoredBatch.self, from: Data(bytes))
        let first = last + 1 - UInt64(batch.events.count)
        return try batch.events.enumerated().map { index, stored in
            CommittedEvent(
                sequence: first + UInt64(index), committedAt: batch.at, change: try stored.change())
        }
    }

    private struct StoredBatch: Decodable {
        var at: Date
        var events: [StoredChange]
    }

    private struct StoredChange: Decodable {
        var t: String
        var run: String?
        var job: String?
        var state: String?
        var n: Int?
        var name: String?
        var id: UInt64?
        var kind: String?
        var time: Date?
        var reason: String?
        var code: Int32?
        var delay: Double?
        var key: String?
        var value: String?
        var at: Date?
        var hook: String?

        func change() throws -> Change {
            func need<Value>(_ value: Value?) throws -> Value {
                guard let value else {
                    throw DecodingError.valueNotFound(
                        Value.self, .init(codingPath: [], debugDescription: "a member of a \(t) event"))
                }
                return value
            }
            switch t {
            case "run": return .run(id: try need(run), state: try need(state.flatMap(RunState.init)))
            case "current": return .currentRun(id: try need(run))
            case "job":
                return .job(
                    runID: try need(run), jobID: try need(job), state: try need(state.flatMap(JobState.init)),
                    attempts: try need(n))
            case "opened": return .jobsOpened(runID: try need(run), count: try need(n))
            case "pipeline": return .pipeline(name: try need(name), suspended: try need(n))
            case "request":
                return .requestPosted(
                    runID: try need(run), id: try need(id),
                    kind: try need(kind.flatMap(OperatorRequest.Kind.init)),
                    jobID: try need(job))
            case "taken": return .requestTaken(runID: try need(run), id: try need(id))
            case "schedule": return .schedule(jobID: try need(job))
            case "deleted": return .runDeleted(id: try need(run))
            case "ev":
                return .event(
                    RunEvent(
                        time: try need(time), run: try need(run), job: job, attempt: n,
                        kind: try need(kind.flatMap(RunEvent.Kind.init)), reason: reason, exitCode: code,
                        delay: delay.map { Duration.seconds($0) }, key: key, value: value, state: state,
                        pipeline: name, occurrence: at, hook: hook))
            case "answer":
                let request = OperatorRequest(
                    id: try need(id), kind: try need(kind.flatMap(OperatorRequest.Kind.init)),
                    jobID: try need(job), requestedAt: try need(time), runID: run)
                let words = try need(reason)
                let result: OperatorResult =
                    switch try need(state) {
                    case "applied": .applied(words)
                    case "terminating": .terminating(jobID: words)
                    default: .refused(words)
                    }
                return .answer(OperatorAnswer(request: request, result: result))
            default:
                throw DecodingError.dataCorrupted(
                    .init(codingPath: [], debugDescription: "an event of kind \(t)"))
            }
        }
    }
}
