import Foundation
import JobRunnerCore

/// `/runs`: the history, newest first, filtered by job and state, paged (what `runs` lists).
struct HistoryPage {
    let model: ReadModel
    let context: PageContext
    let job: String?
    let state: String?
    let page: Int
    /// The page the address asked for, when it was beyond the last one (this is the last).
    var asked: Int?

    /// The run states a filter offers.
    static let states: [RunState] = [.running, .stopped, .succeeded, .failed, .skipped, .missed]

    func render() async throws(StoreError) -> String {
        let found = try await model.runsPage(job: job, state: state, page: page, perPage: Pages.runsPerPage)
        let pages = max(1, (found.total + Pages.runsPerPage - 1) / Pages.runsPerPage)
        if page > pages {
            // Beyond the last page (an old link, a typed number): the last one, saying so.
            var last = HistoryPage(model: model, context: context, job: job, state: state, page: pages)
            last.asked = page
            return try await last.render()
        }
        let schedules = try await model.schedules()
        return context.document(title: "Runs") { html in
            html.raw("<h1>Runs</h1>")
            filters(periodic: schedules.keys.sorted(), into: &html)
            unknownFilters(periodic: schedules.keys.sorted(), matched: found.total > 0, into: &html)
            if let asked {
                html.raw("<p class=\"notice\">")
                html.text(
                    "There is no page \(asked): the history has \(pages) page\(pages == 1 ? "" : "s"); this is the last."
                )
                html.raw("</p>")
            }
            html.raw("<p class=\"muted\">")
            html.text(summary(total: found.total, pages: pages))
            html.raw("</p>")
            if found.entries.isEmpty {
                html.raw("<p class=\"empty\">")
                html.text(found.total == 0 && job == nil && state == nil ? "No runs yet." : "No run matches.")
                html.raw("</p>")
            } else {
                table(found.entries, into: &html)
            }
            pager(pages: pages, into: &html)
        }
    }

    /// A filter that names no state or no periodic job matches nothing: said, with what would.
    private func unknownFilters(periodic: [String], matched: Bool, into html: inout HTML) {
        if let state, !Self.states.contains(where: { $0.rawValue == state }) {
            html.raw("<p class=\"notice error\" role=\"alert\">")
            html.text(
                "There is no run state '\(state)': the states are "
                    + Self.states.map(\.rawValue).joined(separator: ", ") + ".")
            html.raw("</p>")
        }
        if let job, !matched, !periodic.contains(job) {
            html.raw("<p class=\"notice error\" role=\"alert\">")
            html.text(
                "There is no periodic job '\(job)' here: the job filter keeps one periodic job's occurrences"
                    + (periodic.isEmpty
                        ? ", and none has been scheduled yet." : " (\(periodic.joined(separator: ", "))).")
            )
            html.raw("</p>")
        }
    }

    private func summary(total: Int, pages: Int) -> String {
        var words = "\(total) run\(total == 1 ? "" : "s")"
        if let job { words += " of \(job)" }
        if let state { words += " \(state)" }
        return words + (pages > 1 ? "; page \(page) of \(pages)" : "")
    }

    private func filters(periodic: [String], into html: inout HTML) {
        html.raw("<nav class=\"filters\" aria-label=\"Filter by state\"><span class=\"muted\">State:</span>")
        chip("all", Paths.runs(job: job, state: nil, page: 1), on: state == nil, into: &html)
        for option in Self.states {
            chip(
                option.rawValue, Paths.runs(job: job, state: option.rawValue, page: 1),
                on: state == option.rawValue, into: &html)
        }
        html.raw("</nav>")
        html.raw("<nav class=\"filters\" aria-label=\"Filter by job\"><span class=\"muted\">Job:</span>")
        chip("all", Paths.runs(job: nil, state: state, page: 1), on: job == nil, into: &html)
        var jobs = periodic
        if let job, !jobs.contains(job) { jobs.append(job) }
        for id in jobs {
            chip(id, Paths.runs(job: id, state: state, page: 1), on: job == id, into: &html)
        }
        html.raw("</nav>")
    }

    private func chip(_ label: String, _ href: String, on: Bool, into html: inout HTML) {
        html.link(href, label, class: on ? "chip on" : "chip")
    }

    private func table(_ entries: [(run: RunRecord, counts: [JobState: Int])], into html: inout HTML) {
        html.raw(
            "<div class=\"scroll\"><table class=\"history\"><thead><tr><th>Run</th><th>Of</th><th>State</th>")
        html.raw("<th>Started</th><th>Took</th><th>Jobs</th></tr></thead><tbody>")
        for (run, counts) in entries {
            html.raw("<tr><td>")
            context.link(Paths.runPage(run.id), run.id, into: &html)
            html.raw("</td><td>")
            if let job = run.occurrenceOf {
                html.link(Paths.periodicJob(job), Words.of(run))
            } else {
                html.text(Words.of(run))
            }
            html.raw("</td><td>")
            context.badge(run.state.rawValue, into: &html)
            html.raw("</td><td>")
            if run.neverStarted { html.text("-") } else { context.time(run.startedAt, into: &html) }
            html.raw("</td><td>")
            html.text(Words.took(run))
            html.raw("</td><td class=\"wrap\">")
            html.text(Words.counts(counts))
            html.raw("</td></tr>")
        }
        html.raw("</tbody></table></div>")
    }

    private func pager(pages: Int, into html: inout HTML) {
        guard pages > 1 else { return }
        html.raw("<nav class=\"pager\" aria-label=\"Pages\">")
        if page > 1 { html.link(Paths.runs(job: job, state: state, page: page - 1), "← newer") }
        html.raw("<span>")
        html.text("page \(page) of \(pages)")
        html.raw("</span>")
        if page < pages { html.link(Paths.runs(job: job, state: state, page: page + 1), "older →") }
        html.raw("</nav>")
    }
}
