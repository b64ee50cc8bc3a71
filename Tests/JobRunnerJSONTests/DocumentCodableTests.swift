import Foundation
import JobRunnerCore
import JobRunnerJSON
import Testing

@testable import JobRunnerCLI
@testable import JobRunnerLMDB
@testable import JobRunnerPluginAPI
@testable import JobRunnerPluginHost

/// The documents the CLI and the plugin ABI write and read with the JSON layer, held to
/// `Codable` field by field: `--events` lines, `status --json`, plugin requests and responses.
@Suite struct DocumentCodableTests {
    static let texts = JSONFixtures.awkward

    // MARK: Events

    /// An `--events` line as `JSONDecoder` reads it.
    struct EventLine: Decodable {
        var time: String
        var run: String
        var job: String?
        var attempt: Int?
        var event: String
        var pipeline: String?
        var reason: String?
        var exitCode: Int32?
        var delay: Double?
        var key: String?
        var value: String?
        var state: String?
    }

    static func events(_ text: String) -> [RunEvent] {
        JSONFixtures.dates.filter { abs($0.timeIntervalSince1970) < 1e11 }.enumerated().map { index, date in
            index % 2 == 0
                ? RunEvent(
                    time: date, run: text, job: text, attempt: index == 0 ? Int.max : index, kind: .retrying,
                    reason: text, exitCode: Int32.min, delay: .milliseconds(1500 + index), key: text,
                    value: text,
                    state: text, pipeline: text)
                : RunEvent(time: date, run: text, kind: .runFinished)
        }
    }

    @Test(arguments: texts) func eventLines(text: String) throws {
        for event in Self.events(text) {
            let line = EventsWriter.json(event)
            #expect(line == Self.earlierEventLine(event))
            let read = try JSONDecoder().decode(EventLine.self, from: Data(line.utf8))
            let expected = EventLine(
                time: Timestamps.iso(event.time), run: event.run, job: event.job, attempt: event.attempt,
                event: event.kind.rawValue, pipeline: event.pipeline, reason: event.reason,
                exitCode: event.exitCode,
                delay: event.delay.map { Double(String(format: "%.3f", $0.seconds))! }, key: event.key,
                value: event.value, state: event.state)
            #expect(fieldDifferences(expected, read) == [])
        }
    }

    /// An events line as `EventsWriter` wrote it before the JSON layer.
    static func earlierEventLine(_ event: RunEvent) -> String {
        let quote = JSONFixtures.earlierQuote
        var fields: [(String, String)] = [
            ("time", quote(Timestamps.iso(event.time))), ("run", quote(event.run)),
        ]
        if let job = event.job { fields.append(("job", quote(job))) }
        if let attempt = event.attempt { fields.append(("attempt", String(attempt))) }
        fields.append(("event", quote(event.kind.rawValue)))
        if let pipeline = event.pipeline { fields.append(("pipeline", quote(pipeline))) }
        if let reason = event.reason { fields.append(("reason", quote(reason))) }
        if let code = event.exitCode { fields.append(("exitCode", String(code))) }
        if let delay = event.delay { fields.append(("delay", String(format: "%.3f", delay.seconds))) }
        if let key = event.key { fields.append(("key", quote(key))) }
        if let value = event.value { fields.append(("value", quote(value))) }
        if let state = event.state { fields.append(("state", quote(state))) }
        return "{" + fields.map { "\(quote($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }

    // MARK: status --json

    struct StatusDocument: Decodable {
        struct Run: Decodable {
            var id: String
            var state: String
            var startedAt: String?
            var finishedAt: String?
        }
        struct Job: Decodable {
            var id: String
            var pipeline: String
            var state: String
            var reason: String?
            var attempts: Int
            var exitCode: Int32?
            var startedAt: String?
            var finishedAt: String?
            var nextAttemptAt: String?
            var outputs: [String: String]
        }
        struct Pipeline: Decodable {
            var name: String
            var maxConcurrent: Int
            var suspended: Int
            var running: Int
        }
        struct Periodic: Decodable {
            var id: String
            var lastResult: String?
            var lastRun: String?
            var lastScheduledAt: String?
            var nextDueAt: String?
        }
        var run: Run
        var jobs: [Job]
        var pipelines: [Pipeline]
        var periodic: [Periodic]
    }

    @Test(arguments: texts) func statusJSON(text: String) throws {
        let dates = JSONFixtures.dates.filter { abs($0.timeIntervalSince1970) < 1e11 }
        let records = JobState.allCases.enumerated().map { index, state in
            JobRecord(
                jobID: "\(index)" + text, pipeline: text, state: state,
                reason: index % 2 == 0 ? JobReason(words: text.isEmpty ? "x" : text, state: state) : nil,
                attempts: index == 0 ? Int.max : index, exitCode: index % 3 == 0 ? nil : Int32.min,
                startedAt: dates[index % dates.count], finishedAt: index % 2 == 0 ? nil : dates[index],
                nextAttemptAt: dates[(index + 3) % dates.count])
        }
        var run = RunRecord(
            id: text, state: .stopped, startedAt: dates[1], jobIDs: records.map(\.jobID), runnerPID: 1,
            pipelineLimits: [text: 3])
        run.finishedAt = nil
        let overview = RunOverview(
            run: run, states: Dictionary(uniqueKeysWithValues: records.map { ($0.jobID, $0.state) }),
            jobs: Dictionary(uniqueKeysWithValues: records.map { ($0.jobID, $0) }),
            outputs: [records[1].jobID: [text: text, "b": ""]])
        var view = RunView(
            overview: overview, suspended: [text: PipelineRecord(name: text, suspended: 2)], runnerPID: nil)
        var schedule = ScheduleRecord(
            jobID: text, anchor: dates[0], lastScheduled: dates[2], schedule: "every 1h")
        schedule.lastResult = .failed
        schedule.lastRunID = text
        view.schedules = [
            text: schedule, "other": ScheduleRecord(jobID: "other", anchor: dates[0], schedule: "x"),
        ]
        let report = StatusReport(view: view, describing: false)
        var bytes: [UInt8] = []
        report.writeJSON { bytes += $0 }
        let document = try JSONDecoder().decode(StatusDocument.self, from: Data(bytes))

        let iso = { (date: Date?) in date.map(Timestamps.iso) }
        #expect(
            fieldDifferences(
                StatusDocument.Run(
                    id: text, state: "stopped", startedAt: iso(run.startedAt), finishedAt: nil),
                document.run) == [])
        var rows: [StatusReport.Row] = []
        report.forEachRow { rows.append($0) }
        let expectedJobs = rows.map { row in
            StatusDocument.Job(
                id: row.record.jobID, pipeline: row.record.pipeline, state: row.state.rawValue,
                reason: row.reason?.words, attempts: row.record.attempts, exitCode: row.record.exitCode,
                startedAt: iso(row.record.startedAt), finishedAt: iso(row.record.finishedAt),
                nextAttemptAt: iso(row.record.nextAttemptAt),
                outputs: overview.outputs[row.record.jobID] ?? [:])
        }
        #expect(fieldDifferences(expectedJobs, document.jobs) == [])
        #expect(
            fieldDifferences(
                report.pipelines.map {
                    StatusDocument.Pipeline(
                        name: $0.name, maxConcurrent: $0.maxConcurrent, suspended: $0.suspended,
                        running: $0.running)
                }, document.pipelines) == [])
        #expect(
            fieldDifferences(
                [
                    StatusDocument.Periodic(
                        id: "other", lastResult: nil, lastRun: nil, lastScheduledAt: nil, nextDueAt: nil),
                    StatusDocument.Periodic(
                        id: text, lastResult: "failed", lastRun: text, lastScheduledAt: iso(dates[2]),
                        nextDueAt: nil),
                ].sorted { $0.id < $1.id }, document.periodic) == [])
    }

    // MARK: Plugin requests and responses

    static func requests(_ text: String) -> [PluginRequest<JSONValue>] {
        let parameters = JSONValue.object([
            text: .string(text),
            "numbers": .array([.int(Int.max), .int(Int.min), .double(0.5), .double(-1.5e300)]),
            "nested": .object([
                "deeper": .object([text: .array([.null, .bool(true)])]), "empty": .object([:]),
            ]),
        ])
        return [
            PluginRequest(
                handler: text, job: text, run: text, attempt: Int.max, parameters: parameters,
                needs: [text: [text: text, "b": ""], "c": [:]], log: text, workdir: text),
            PluginRequest(
                handler: "h", job: "j", run: "r", attempt: 1, parameters: .object([:]), needs: [:], log: nil,
                workdir: "/"),
        ]
    }

    @Test(arguments: texts) func pluginRequests(text: String) throws {
        for request in Self.requests(text) {
            let written = request.jsonBytes
            #expect(
                fieldDifferences(
                    request, try JSONDecoder().decode(PluginRequest<JSONValue>.self, from: Data(written)))
                    == [])
            for bytes in [written, Array(try JSONEncoder().encode(request))] {
                let envelope = try #require(bytes.withUnsafeBytes { RequestEnvelope(quickJSON: $0) })
                #expect(
                    fieldDifferences(
                        [request.handler, request.job, request.run, request.workdir],
                        [envelope.handler, envelope.job, envelope.run, envelope.workdir]) == [])
                #expect(envelope.attempt == request.attempt)
                #expect(fieldDifferences(request.needs, envelope.needs) == [])
                #expect(fieldDifferences(request.log as Any, envelope.log as Any) == [])
                let parameters = Data(bytes[envelope.parameters])
                #expect(try JSONDecoder().decode(JSONValue.self, from: parameters) == request.parameters)
            }
        }
    }

    static func responses(_ text: String) -> [PluginResponse] {
        [
            PluginResponse(status: .retry, message: text, retryAfter: 1.5, outputs: [text: text, "b": ""]),
            PluginResponse(status: .succeeded),
            PluginResponse(status: .failed, message: text, retryAfter: .leastNonzeroMagnitude),
            PluginResponse(status: .skipped, retryAfter: 1e300, outputs: [:]),
        ]
    }

    @Test(arguments: texts) func pluginResponses(text: String) throws {
        for response in Self.responses(text) {
            let written = try #require(response.jsonBytes)
            #expect(
                fieldDifferences(response, try JSONDecoder().decode(PluginResponse.self, from: Data(written)))
                    == [])
            for bytes in [written, Array(try JSONEncoder().encode(response))] {
                let read = bytes.withUnsafeBytes { PluginResponse(quickJSON: $0) }
                #expect(fieldDifferences(response, read as Any) == [])
            }
        }
        #expect(PluginResponse(status: .retry, retryAfter: .infinity).jsonBytes == nil)
    }

    /// A response the quick reader declines (a lone surrogate, a repeated member, nesting too
    /// deep in a member it skips) is left to `JSONDecoder`, whose answer stands.
    @Test func unusualResponsesAreLeftToJSONDecoder() throws {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        for text in [
            #"{"status":"failed","message":"\ud800"}"#, #"{"status":"failed","status":"retry"}"#,
            #"{"status":"failed","extra":\#(deep)}"#, #"{"status":"failed","message":"a"#,
            #"{"status":"succeeded","outputs":{"a":1}}"#,
        ] {
            let bytes = Array(text.utf8)
            #expect(bytes.withUnsafeBytes { PluginResponse(quickJSON: $0) } == nil, "\(text)")
            let decoded = try? JSONDecoder().decode(PluginResponse.self, from: Data(bytes))
            #expect(
                fieldDifferences(
                    decoded as Any, (try? bytes.withUnsafeBytes { try PluginResponse.decode($0) }) as Any)
                    == [])
        }
    }
}
