import Foundation
import JobRunnerCore
import JobRunnerHTTP
import JobRunnerPages

/// The dashboard's HTML pages (JobRunnerPages) at the addresses the server routes to them:
/// `/`, `/runs?job=ID&state=STATE&page=N`, `/runs/ID`, `/runs/ID/jobs/JOB/attempts/N`, `/jobs/ID`.
struct DashboardPages: PageRendering {
    func page(
        path: [String], query: [String: String], reader: ReadModel, csrfToken: String?, readOnly: Bool
    ) async throws -> String? {
        var settings = PageSettings(csrfToken: csrfToken, readOnly: readOnly, live: true, now: Date())
        // What an action said, on the page it returned to (the server adds it).
        settings.message = query["message"]
        settings.messageIsError = query["message-kind"] == "error"
        switch path.count {
        case 0:
            return try await Pages.home(reader, settings: settings)
        case 1 where path[0] == "runs":
            let page = query["page"].flatMap { Int($0) } ?? 1
            return try await Pages.runs(
                reader, job: query["job"], state: query["state"], page: page, settings: settings)
        case 2 where path[0] == "runs":
            return try await Pages.run(reader, runID: path[1], settings: settings)
        case 2 where path[0] == "jobs":
            return try await Pages.periodicJob(reader, jobID: path[1], settings: settings)
        case 6 where path[0] == "runs" && path[2] == "jobs" && path[4] == "attempts":
            guard let number = Int(path[5]) else { return nil }
            return try await Pages.attempt(
                reader, runID: path[1], jobID: path[3], attempt: number, settings: settings)
        default:
            return nil
        }
    }

    func notFound(path: [String], reader: ReadModel, readOnly: Bool) async -> String {
        await Pages.notFound(
            reader, path: path,
            settings: PageSettings(csrfToken: nil, readOnly: readOnly, live: false, now: Date()))
    }

    func asset(named name: String) -> (contentType: String, body: [UInt8])? {
        Pages.asset(named: name)
    }
}
