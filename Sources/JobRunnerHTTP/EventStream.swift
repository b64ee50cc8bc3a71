import Foundation
import JobRunnerCore
import JobRunnerJSON

/// The Server-Sent Events of `GET /events`: each committed event as `id: SEQUENCE`,
/// `event: TYPE` (SPEC 5.10's name) and `data: ` its JSON line as `run --events` writes it.
/// The `queued` events of a new run's jobs come as one `jobs-opened` (with the count): a run
/// of 100,000 jobs opens in one commit.
enum EventStream {
    /// The event's name and its JSON line (no line break). An event of SPEC 5.10 is the
    /// document `run --events` writes for it (``RunEvent/jsonLine``), stored with its commit;
    /// the store's own changes, which SPEC 5.10 does not name, have names of their own. A job's
    /// record alone makes none: its events say what became of it.
    static func describe(_ event: CommittedEvent) -> (type: String, json: [UInt8])? {
        var json = JSONWriter(capacity: 192, style: .shortEscapes)
        let time = event.committedAt
        switch event.change {
        case .event(let line):
            return (line.kind.rawValue, line.jsonLine)
        case .job:
            return nil
        case .answer(let answer):
            return other("answer", time: time, json: &json) {
                $0.member(raw: #", "run": "#, answer.request.runID)
                $0.member(raw: #", "job": "#, answer.request.jobID)
                $0.member(raw: #", "request": "#, answer.request.kind.rawValue)
                switch answer.result {
                case .applied(let words): $0.member(raw: #", "message": "#, words)
                case .terminating(let jobID): $0.member(raw: #", "message": "#, "ending \(jobID)'s attempt")
                case .refused(let words): $0.member(raw: #", "refused": "#, words)
                }
            }
        case .run(let id, let state):
            return other("run", time: time, json: &json) {
                $0.member(raw: #", "run": "#, id)
                $0.member(raw: #", "state": "#, state.rawValue)
            }
        case .pipeline(let name, let suspended):
            return other("pipeline", time: time, json: &json) {
                $0.member(raw: #", "pipeline": "#, name)
                $0.member(raw: #", "suspended": "#, suspended)
            }
        case .currentRun(let id):
            return other("current-run", time: time, json: &json) { $0.member(raw: #", "run": "#, id) }
        case .jobsOpened(let runID, let count):
            return other("jobs-opened", time: time, json: &json) {
                $0.member(raw: #", "run": "#, runID)
                $0.member(raw: #", "count": "#, count)
            }
        case .schedule(let jobID):
            return other("schedule", time: time, json: &json) { $0.member(raw: #", "job": "#, jobID) }
        case .requestPosted(let runID, _, let kind, let jobID):
            return other("request", time: time, json: &json) {
                $0.member(raw: #", "run": "#, runID)
                $0.member(raw: #", "job": "#, jobID)
                $0.member(raw: #", "request": "#, kind.rawValue)
            }
        case .requestTaken(let runID, _):
            return other("request-taken", time: time, json: &json) { $0.member(raw: #", "run": "#, runID) }
        case .runDeleted(let id):
            return other("run-deleted", time: time, json: &json) { $0.member(raw: #", "run": "#, id) }
        case .missed(let through):
            return other("missed", time: time, json: &json) { $0.member(raw: #", "through": "#, through) }
        }
    }

    /// An event with no name in SPEC 5.10 (the store's own changes), in the same shape.
    private static func other(
        _ type: String, time: Date, json: inout JSONWriter, _ members: (inout JSONWriter) -> Void
    ) -> (type: String, json: [UInt8]) {
        json.raw(#"{"time": ""#)
        ISOTimestamp.withISO(time) { json.raw($0) }
        json.raw(#"""#)
        json.member(raw: #", "event": "#, type)
        members(&json)
        json.raw("}")
        return (type, json.bytes)
    }

    /// The bytes of one event on the stream; none for a change that is no event of its own.
    static func frame(_ event: CommittedEvent, into bytes: inout [UInt8]) {
        guard let (type, json) = describe(event) else { return }
        bytes.append(contentsOf: "id: \(event.sequence)\nevent: \(type)\ndata: ".utf8)
        bytes.append(contentsOf: json)
        bytes.append(contentsOf: "\n\n".utf8)
    }
}
