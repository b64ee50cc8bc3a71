import Foundation
import JobRunnerCore

/// `/jobs/ID`: a periodic job: its schedule, last result, next dates, occurrences, and trigger.
struct PeriodicJobPage {
    let model: ReadModel
    let context: PageContext
    let jobID: String

    /// How many occurrences are listed, newest first.
    static let occurrenceLimit = 50

    func render() async throws(StoreError) -> String? {
        let schedule = try await model.schedules()[jobID]
        let occurrences = try await model.runs().filter { $0.occurrenceOf == jobID }
            .sorted { ($0.scheduledAt ?? $0.startedAt, $0.id) > ($1.scheduledAt ?? $1.startedAt, $1.id) }
        guard schedule != nil || !occurrences.isEmpty else { return nil }
        var counts: [String: [JobState: Int]] = [:]
        for run in occurrences.prefix(Self.occurrenceLimit) {
            counts[run.id] = try await model.counts(runID: run.id)
        }
        return context.document(title: jobID) { html in
            html.raw("<h1>")
            html.text(jobID)
            html.raw(" <span class=\"muted\">periodic job</span></h1>")
            if let schedule { self.schedule(schedule, into: &html) }
            html.raw("<section><h2>Occurrences</h2>")
            if occurrences.isEmpty {
                html.raw("<p class=\"empty\">No occurrence yet.</p>")
            } else {
                html.raw("<p class=\"muted\">")
                html.text("\(occurrences.count) occurrence\(occurrences.count == 1 ? "" : "s")")
                if occurrences.count > Self.occurrenceLimit {
                    html.text("; the latest \(Self.occurrenceLimit) are listed: ")
                    context.link(
                        Paths.runs(job: jobID, state: nil, page: 1), "all of them under Runs", into: &html)
                }
                html.raw("</p>")
                table(Array(occurrences.prefix(Self.occurrenceLimit)), counts: counts, into: &html)
            }
            html.raw("</section>")
        }
    }

    private func schedule(_ record: ScheduleRecord, into html: inout HTML) {
        html.raw("<dl class=\"facts\"><dt>Schedule</dt><dd>")
        html.text(record.schedule)
        html.raw("</dd><dt>Last result</dt><dd>")
        if let result = record.lastResult {
            context.badge(result.rawValue, into: &html)
            if let run = record.lastRunID {
                html.raw(" ")
                context.link(Paths.runPage(run), run, into: &html)
            }
        } else {
            html.raw("no occurrence finished yet")
        }
        html.raw("</dd><dt>Next due</dt><dd>")
        if let next = record.nextDue {
            context.time(next, into: &html, relative: true)
        } else {
            html.raw("no next date")
        }
        html.raw("</dd>")
        let waiting = record.waiting
        if !waiting.isEmpty {
            html.raw("<dt>Waiting to run</dt><dd>")
            for (index, date) in waiting.prefix(20).enumerated() {
                if index > 0 { html.raw(", ") }
                context.time(date, into: &html)
            }
            if waiting.count > 20 { html.text(" and \(waiting.count - 20) more") }
            html.raw("</dd>")
        }
        html.raw("<dt>First seen</dt><dd>")
        context.time(record.anchor, into: &html)
        html.raw("</dd></dl>")
        if context.actions {
            // A form is no phrasing content: not inside a <p>.
            html.raw("<div class=\"actions\">")
            context.actionForm(Paths.trigger(jobID), label: "Trigger now", into: &html)
            html.raw("</div>")
        }
    }

    private func table(_ runs: [RunRecord], counts: [String: [JobState: Int]], into html: inout HTML) {
        html.raw(
            "<div class=\"scroll\"><table class=\"occurrences\"><thead><tr><th>Run</th><th>Due</th><th>State</th>"
        )
        html.raw("<th>Started</th><th>Took</th><th>Detail</th></tr></thead><tbody>")
        for run in runs {
            html.raw("<tr><td>")
            context.link(Paths.runPage(run.id), run.id, into: &html)
            html.raw("</td><td>")
            context.time(run.scheduledAt, into: &html)
            html.raw("</td><td>")
            context.badge(run.state.rawValue, into: &html)
            html.raw("</td><td>")
            if run.neverStarted { html.text("-") } else { context.time(run.startedAt, into: &html) }
            html.raw("</td><td>")
            html.text(Words.took(run))
            html.raw("</td><td class=\"wrap\">")
            switch run.state {
            case .skipped: html.prose("the previous occurrence still ran (`overlap: skip`)")
            case .missed: html.text("missed while no runner was up")
            default: html.text(Words.counts(counts[run.id] ?? [:]))
            }
            html.raw("</td></tr>")
        }
        html.raw("</tbody></table></div>")
    }
}
