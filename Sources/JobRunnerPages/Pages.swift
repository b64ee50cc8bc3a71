import Foundation
public import JobRunnerCore

/// The dashboard's pages (SPEC 7), rendered on the server from the read model: whole HTML
/// documents, readable without JavaScript, everything read from the store escaped. The server
/// routes `/`, `/runs`, `/runs/ID`, `/runs/ID/jobs/JOB/attempts/N`, `/jobs/ID` and `/assets/NAME`
/// here; `jobrunner report --html` writes ``report(_:runID:now:)``.
public enum Pages {
    /// Runs a page lists at once on `/runs`.
    static let runsPerPage = 50

    /// `/`: runs under way, counts by state, pipelines, waiting for internet and constraints,
    /// periodic jobs, recent failures.
    public static func home(_ model: ReadModel, settings: PageSettings) async throws(StoreError) -> String {
        let context = PageContext(settings: settings, path: "/")
        return try await HomePage(model: model, context: context).render()
    }

    /// The page of an address that names nothing (the server answers it with 404): what it
    /// asked for, and links to where to look instead; a one-shot job asked for at `/jobs/ID`
    /// links its run.
    public static func notFound(_ model: ReadModel, path: [String], settings: PageSettings) async -> String {
        let context = PageContext(
            settings: settings, path: "/" + path.map(Paths.segment).joined(separator: "/"))
        return await NotFoundPage(model: model, context: context, path: path).render()
    }

    /// `/runs?job=ID&state=STATE&page=N`: the history, newest first, filtered and paged.
    public static func runs(
        _ model: ReadModel, job: String?, state: String?, page: Int, settings: PageSettings
    ) async throws(StoreError) -> String {
        let job = job.flatMap { $0.isEmpty ? nil : $0 }
        let state = state.flatMap { $0.isEmpty ? nil : $0 }
        let page = max(1, page)
        let context = PageContext(settings: settings, path: Paths.runs(job: job, state: state, page: page))
        return try await HistoryPage(model: model, context: context, job: job, state: state, page: page)
            .render()
    }

    /// `/runs/ID`: the run's graph, its timeline, and each job with its attempts, reason,
    /// outputs and actions; nil when there is no such run.
    public static func run(_ model: ReadModel, runID: String, settings: PageSettings) async throws(StoreError)
        -> String?
    {
        guard let detail = try await model.runDetail(runID: runID) else { return nil }
        let context = PageContext(settings: settings, path: Paths.runPage(runID))
        return RunPage(detail: detail, context: context, model: model).render()
    }

    /// `/runs/ID/jobs/JOB/attempts/N`: one attempt's log, its tail first when it is large;
    /// nil when there is no such run, job or attempt.
    public static func attempt(
        _ model: ReadModel, runID: String, jobID: String, attempt: Int, settings: PageSettings
    ) async throws(StoreError) -> String? {
        guard let snapshot = try await model.snapshot(runID: runID), let job = snapshot.jobs[jobID],
            let record = snapshot.attempts[jobID]?.first(where: { $0.number == attempt })
        else { return nil }
        let context = PageContext(
            settings: settings, path: Paths.attempt(run: runID, job: jobID, number: attempt))
        return AttemptPage(
            run: snapshot.run, job: job, attempt: record, count: snapshot.attempts[jobID]?.count ?? 0,
            model: model, context: context
        ).render()
    }

    /// `/jobs/ID`: a periodic job: its schedule, next dates, occurrences and trigger; nil when
    /// no periodic job has that id.
    public static func periodicJob(_ model: ReadModel, jobID: String, settings: PageSettings)
        async throws(StoreError) -> String?
    {
        let context = PageContext(settings: settings, path: Paths.periodicJob(jobID))
        return try await PeriodicJobPage(model: model, context: context, jobID: jobID).render()
    }

    /// A run's page as one self-contained document for a CI artifact (`report --html`): the CSS
    /// and SVG inline, no script, no forms, no links to a server; the tail of each failed
    /// attempt's log included. nil when there is no such run.
    public static func report(_ model: ReadModel, runID: String, now: Date) async throws(StoreError)
        -> String?
    {
        guard let detail = try await model.runDetail(runID: runID) else { return nil }
        return RunPage(detail: detail, context: .report(now: now), model: model).render()
    }

    /// A static asset compiled into the binary: `app.css`, `app.js` or `favicon.svg`; nil for
    /// any other name.
    public static func asset(named name: String) -> (contentType: String, body: [UInt8])? {
        switch name {
        case "app.css": ("text/css; charset=utf-8", Array(Assets.css.utf8))
        case "app.js": ("text/javascript; charset=utf-8", Array(Assets.script.utf8))
        case "favicon.svg": ("image/svg+xml", Array(Assets.favicon.utf8))
        default: nil
        }
    }
}
