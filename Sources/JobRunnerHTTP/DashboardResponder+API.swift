import Foundation
import HTTPTypes
import Hummingbird
import JobRunnerCore
import NIOCore

extension DashboardResponder {
    /// `GET /api/v1/…`: the same documents as the commands' `--json`.
    func api(_ request: Request, path: [String]) async throws -> Response {
        guard path.first == "v1" else {
            return Self.error(.notFound, "no such route; the API is under /api/v1")
        }
        let rest = Array(path.dropFirst())
        let query = request.uri.queryParameters
        switch rest.count {
        case 1 where rest[0] == "status":
            return try await status(runID: query["run"].map(String.init))
        case 1 where rest[0] == "openapi.json":
            return Self.json(.ok, Array(OpenAPIDocument.json.utf8))
        case 1 where rest[0] == "runs":
            var limit = 20
            if let text = query["limit"] {
                guard let value = Int(text), (1...10_000).contains(value) else {
                    return Self.error(
                        .badRequest, "limit must be a whole number from 1 to 10000, not '\(text)'")
                }
                limit = value
            }
            return try await runs(limit: limit, job: query["job"].map(String.init))
        case 2 where rest[0] == "runs":
            return try await status(runID: rest[1])
        case 7 where rest[0] == "runs" && rest[2] == "jobs" && rest[4] == "attempts" && rest[6] == "log":
            guard let number = Int(rest[5]), number >= 1 else {
                return Self.error(.notFound, "no attempt '\(rest[5])': attempts are numbered from 1")
            }
            return try await log(runID: rest[1], jobID: rest[3], attempt: number, request: request)
        default:
            return Self.error(.notFound, "no such route: \(request.uri.path) (see /api/v1/openapi.json)")
        }
    }

    /// `status --json` of a run (the current one when `runID` is nil), streamed as it is made.
    private func status(runID: String?) async throws -> Response {
        var id = runID
        if id == nil { id = try await reader.currentRunID() }
        guard let id else {
            return Self.json(.ok, Array("{\"run\": null, \"jobs\": [], \"pipelines\": []}\n".utf8))
        }
        guard Self.usable(id),
            let view = try await reader.runView(runID: id, all: true, countsUnlisted: false)
        else {
            return Self.error(.notFound, "no run '\(id)'")
        }
        // Written as it is made, in pieces: a 100,000-job run is never one buffer.
        let body = ResponseBody { writer in
            var pieces: [[UInt8]] = []
            StatusJSON.write(view) { pieces.append($0) }
            for piece in pieces where !piece.isEmpty {
                try await writer.write(ByteBuffer(bytes: piece))
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: Self.jsonHeaders, body: body)
    }

    /// `runs --json` as one array, newest first; `job` keeps one periodic job's occurrences.
    private func runs(limit: Int, job: String?) async throws -> Response {
        let entries = try await reader.recentRuns(limit: limit, job: job)
        return Self.json(.ok, Array(RunsJSON.array(entries).utf8))
    }

    /// An attempt's log, by ranges straight from the file.
    private func log(runID: String, jobID: String, attempt number: Int, request: Request) async throws
        -> Response
    {
        guard Self.usable(runID), let snapshot = try await reader.snapshot(runID: runID) else {
            return Self.error(.notFound, "no run '\(runID)'")
        }
        guard snapshot.jobs[jobID] != nil else {
            return Self.error(.notFound, "run \(runID) has no job '\(jobID)'")
        }
        guard let attempt = snapshot.attempts[jobID]?.first(where: { $0.number == number }) else {
            return Self.error(.notFound, "job \(jobID) of run \(runID) has no attempt \(number)")
        }
        return LogFile.response(
            path: reader.logPath(of: attempt, runID: runID), range: request.headers[.range],
            download: request.uri.queryParameters["download"] != nil,
            name: "\(jobID)-\(number).log")
    }
}
