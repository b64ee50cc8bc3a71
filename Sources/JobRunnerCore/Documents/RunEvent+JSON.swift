import Foundation
import JobRunnerJSON

extension RunEvent {
    /// The event's JSON document, without a line break: a line of `--events` and the `data:` of
    /// its `GET /events` frame, byte for byte (one code path for both).
    public var jsonLine: [UInt8] {
        var json = JSONWriter(capacity: 192, style: .shortEscapes)
        writeJSON(to: &json)
        return json.bytes
    }

    /// Writes the event as a JSON object, members in a fixed order, absent ones left out, a space
    /// after each colon and comma (as the lines have always been written).
    public func writeJSON(to json: inout JSONWriter) {
        json.raw(#"{"time": ""#)
        ISOTimestamp.withISO(time) { json.raw($0) }
        json.raw(#"", "run": "#)
        json.string(run)
        json.member(raw: #", "job": "#, job)
        json.member(raw: #", "attempt": "#, attempt)
        json.member(raw: #", "event": "#, kind.rawValue)
        json.member(raw: #", "pipeline": "#, pipeline)
        json.member(raw: #", "hook": "#, hook)
        json.member(raw: #", "reason": "#, reason)
        json.member(raw: #", "exitCode": "#, exitCode)
        if let delay = delay {
            json.raw(#", "delay": "#)
            json.raw(Array(String(format: "%.3f", delay.seconds).utf8))
        }
        json.member(raw: #", "key": "#, key)
        json.member(raw: #", "value": "#, value)
        json.member(raw: #", "state": "#, state)
        // Last, so the members before it stand as they always did.
        if let occurrence {
            json.raw(#", "scheduledAt": ""#)
            ISOTimestamp.withISO(occurrence) { json.raw($0) }
            json.raw(#"""#)
        }
        json.raw("}")
    }
}
