import Foundation
import JobRunnerJSON

// MARK: Reading the stored form

extension CommittedEvent {
    /// Reads back a stored batch (``Batch``) whose last event has the number `last`: where its
    /// bytes lie, as ``Batch`` writes them; anything else (a batch of another version) by
    /// `JSONDecoder`, whose answer stands. The dashboard's event hub reads every commit's
    /// batch: through `JSONDecoder` that took more CPU than the run it followed.
    /// - Throws: when the bytes are not such a batch (a damaged store).
    public static func events(inBatch bytes: [UInt8], last: UInt64) throws -> [CommittedEvent] {
        let batch =
            try bytes.withUnsafeBytes(StoredBatch.read)
            ?? JSONDecoder().decode(StoredBatch.self, from: Data(bytes))
        let first = last + 1 - UInt64(batch.events.count)
        return try batch.events.enumerated().map { index, stored in
            CommittedEvent(
                sequence: first + UInt64(index), committedAt: batch.at, change: try stored.change())
        }
    }

    struct StoredBatch: Decodable {
        var at: Date
        var events: [StoredChange]
    }

    struct StoredChange: Decodable {
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

extension CommittedEvent.StoredBatch {
    private enum Member: CaseIterable {
        case at, events
        static let names = JSONMembers<Member>()
    }

    /// The batch as ``CommittedEvent/Batch`` writes it; nil for anything else (the caller
    /// decodes it with `JSONDecoder`).
    static func read(_ bytes: UnsafeRawBufferPointer) -> Self? {
        var reader = JSONReader(bytes)
        var at: Date?
        var events: [CommittedEvent.StoredChange] = []
        let read = reader.object(Member.names) { member, reader in
            switch member {
            case .at:
                at = reader.date()
                return at != nil
            case .events:
                return reader.array { reader in
                    guard let change = CommittedEvent.StoredChange.read(&reader) else { return false }
                    events.append(change)
                    return true
                }
            }
        }
        guard read, reader.atEnd(), let at else { return nil }
        return Self(at: at, events: events)
    }
}

extension CommittedEvent.StoredChange {
    private enum Member: CaseIterable {
        case t, run, job, state, n, name, id, kind, time, reason, code, delay, key, value, at, hook
        static let names = JSONMembers<Member>()
    }

    /// One stored change, read where it lies; nil when it is not as written (a member unknown,
    /// of another type, or `t` missing).
    static func read(_ reader: inout JSONReader) -> Self? {
        var change = Self(t: "")
        var hasType = false
        let read = reader.object(Member.names) { member, reader in
            switch member {
            case .t:
                guard let value = reader.string() else { return false }
                change.t = value
                hasType = true
            case .run: change.run = reader.string()
            case .job: change.job = reader.string()
            case .state: change.state = reader.string()
            case .n: change.n = reader.integer()
            case .name: change.name = reader.string()
            case .id: change.id = reader.integer().flatMap { UInt64(exactly: $0) }
            case .kind: change.kind = reader.string()
            case .time: change.time = reader.date()
            case .reason: change.reason = reader.string()
            case .code: change.code = reader.integer().flatMap { Int32(exactly: $0) }
            case .delay: change.delay = reader.double()
            case .key: change.key = reader.string()
            case .value: change.value = reader.string()
            case .at: change.at = reader.date()
            case .hook: change.hook = reader.string()
            }
            return !reader.failed
        }
        guard read, hasType else { return nil }
        return change
    }
}
