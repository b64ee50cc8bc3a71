import Foundation
import JobRunnerCore
import JobRunnerJSON

/// The Server-Sent Events of `GET /events`: each committed event as `id: SEQUENCE`,
/// `event: TYPE` (SPEC 5.10's name) and `data: ` its JSON line as `run --events` writes it.
enum EventStream {
    /// The event's name and its JSON line (no line break).
    static func describe(_ event: CommittedEvent) -> (type: String, json: [UInt8]) {
        var json = JSONWriter(capacity: 192, style: .shortEscapes)
        let time = event.committedAt
        switch event.change {
        case .job(let runID, let jobID, let state, let attempts):
            let kind: RunEvent.Kind =
                switch state {
                case .pending: .queued
                case .waiting: .waiting
                case .running: .started
                case .succeeded: .succeeded
                case .failed: .failed
                case .skipped: .skipped
                case .blocked: .blocked
                case .cancelled: .cancelled
                }
            let line = RunEvent(
                time: time, run: runID, job: jobID, attempt: attempts > 0 ? attempts : nil, kind: kind)
            line.writeJSON(to: &json)
            return (kind.rawValue, json.bytes)
        case .run(let id, let state):
            if state.isFinal || state == .stopped {
                RunEvent(time: time, run: id, kind: .runFinished, state: state.rawValue).writeJSON(to: &json)
                return (RunEvent.Kind.runFinished.rawValue, json.bytes)
            }
            return other("run", time: time, json: &json) {
                $0.member(raw: #", "run": "#, id)
                $0.member(raw: #", "state": "#, state.rawValue)
            }
        case .pipeline(let name, let suspended):
            return other(suspended > 0 ? "suspended" : "resumed", time: time, json: &json) {
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

    /// The bytes of one event on the stream.
    static func frame(_ event: CommittedEvent, into bytes: inout [UInt8]) {
        let (type, json) = describe(event)
        bytes.append(contentsOf: "id: \(event.sequence)\nevent: \(type)\ndata: ".utf8)
        bytes.append(contentsOf: json)
        bytes.append(contentsOf: "\n\n".utf8)
    }
}
