import Foundation
import JobRunnerCore

/// `/runs/ID` and `report --html`: a run's graph, timeline and jobs.
struct RunPage {
    let detail: RunDetail
    let context: PageContext
    let model: ReadModel

    /// Runs with more jobs than this list only the jobs that did not succeed.
    static let listLimit = 200
    /// How many lines of a failed attempt's log a report includes.
    static let reportLogLines = 40

    var run: RunRecord { detail.run }

    func render() -> String {
        context.document(title: "Run \(run.id)") { html in
            heading(into: &html)
            if let words = Words.withoutAttempt(run, now: context.now), detail.snapshot.jobs.isEmpty {
                html.raw("<p class=\"notice\">")
                html.prose(words)
                html.raw("</p>")
            }
            counts(into: &html)
            pipelines(into: &html)
            if !detail.snapshot.jobs.isEmpty {
                html.raw("<section><h2>Graph</h2>")
                GraphSection(detail: detail, context: context).render(into: &html)
                html.raw("</section><section><h2>Timeline</h2>")
                TimelineSection(detail: detail, context: context).render(into: &html)
                html.raw("</section>")
            }
            jobs(into: &html)
        }
    }

    private func heading(into html: inout HTML) {
        html.raw("<h1>Run <span class=\"id\">")
        html.text(run.id)
        html.raw("</span> ")
        context.badge(run.state.rawValue, into: &html)
        html.raw("</h1><p class=\"meta\">")
        if let job = run.occurrenceOf {
            html.raw("occurrence of ")
            context.link(Paths.periodicJob(job), job, into: &html)
            if let due = run.scheduledAt {
                html.raw(", due ")
                context.time(due, into: &html)
            }
            html.raw(" · ")
        }
        // An occurrence recorded skipped or missed never started: when it was recorded.
        html.raw(run.neverStarted ? "recorded " : "started ")
        context.time(run.startedAt, into: &html, relative: true)
        if let finished = run.finishedAt, !run.neverStarted {
            html.raw(" · finished ")
            context.time(finished, into: &html)
            html.raw(" · took ")
            html.text(Words.took(run))
        }
        if let runner = Words.runner(
            of: run, runnerPID: detail.view.runnerPID, replaced: detail.view.replaced)
        {
            html.raw(" · ")
            html.prose(runner)
        }
        html.raw("</p>")
    }

    private func counts(into html: inout HTML) {
        var counts: [JobState: Int] = [:]
        for state in detail.shownStates.values { counts[state, default: 0] += 1 }
        guard !counts.isEmpty else { return }
        html.raw("<ul class=\"counts\">")
        for state in JobState.allCases {
            let count = counts[state] ?? 0
            html.raw("<li class=\"count s-" + state.rawValue + (count == 0 ? " zero" : "") + "\">")
            html.raw("<span class=\"n\">\(count)</span> ")
            html.text(state.rawValue)
            html.raw("</li>")
        }
        html.raw("</ul>")
    }

    private func pipelines(into html: inout HTML) {
        let rows = detail.view.pipelines
        guard !rows.isEmpty else { return }
        html.raw("<p class=\"meta\">pipelines: ")
        for (index, row) in rows.enumerated() {
            if index > 0 { html.raw("; ") }
            html.text(
                "\(row.name) \(Words.pipeline(row))"
                    + (row.suspended > 0 ? ", suspended: \(row.suspended)" : ""))
        }
        html.raw("</p>")
    }

    /// The jobs listed: all of them, or in a big run those that did not succeed.
    private func listed() -> (jobs: [RunView.Job], unlisted: Int) {
        let all = run.jobIDs.count <= Self.listLimit
        var jobs: [RunView.Job] = []
        var unlisted = 0
        detail.view.forEachJob { job in
            if all || job.state != .succeeded {
                jobs.append(job)
            } else {
                unlisted += 1
            }
        }
        return (jobs, unlisted)
    }

    private func jobs(into html: inout HTML) {
        let (jobs, unlisted) = listed()
        guard !jobs.isEmpty || unlisted > 0 else { return }
        html.raw("<section><h2>Jobs</h2>")
        if unlisted > 0 {
            html.raw("<p class=\"notice\">")
            html.text(
                "\(unlisted) succeeded job\(unlisted == 1 ? " is" : "s are") not listed: a run of more than \(Self.listLimit) jobs lists only the jobs that did not succeed."
            )
            html.raw("</p>")
        }
        let states = detail.view.overview.states
        for job in jobs {
            self.job(job, states: states, into: &html)
        }
        html.raw("</section>")
    }

    private func job(_ job: RunView.Job, states: [String: JobState], into html: inout HTML) {
        let record = job.record
        let id = record.jobID
        html.raw("<article class=\"job\" id=\"" + Paths.anchor(id) + "\"><header><h3>")
        html.text(id)
        html.raw("</h3> ")
        context.badge(job.state.rawValue, into: &html)
        if record.isAllowedFailure { html.raw(" <span class=\"muted\">(allowed)</span>") }
        html.raw("<span class=\"actions\">")
        actions(for: record, into: &html)
        html.raw("</span></header><p class=\"detail\">")
        html.prose(Words.detail(of: job, states: states, now: context.now))
        html.raw("</p><p class=\"meta\">pipeline ")
        html.text(record.pipeline)
        html.text(" · " + record.attemptsWords)
        if !record.needs.isEmpty {
            html.raw(" · needs ")
            for (index, need) in record.needs.enumerated() {
                if index > 0 { html.raw(", ") }
                html.link("#" + Paths.anchor(need), need)
            }
        }
        html.raw("</p>")
        attempts(of: id, into: &html)
        outputs(of: id, into: &html)
        html.raw("</article>")
    }

    private func actions(for record: JobRecord, into html: inout HTML) {
        guard context.actions else { return }
        let id = record.jobID
        switch record.state {
        case .failed, .blocked, .cancelled:
            context.actionForm(Paths.jobAction(run: run.id, job: id, "retry"), label: "Retry", into: &html)
            context.actionForm(Paths.jobAction(run: run.id, job: id, "skip"), label: "Skip", into: &html)
        case .pending, .waiting, .running:
            context.actionForm(Paths.jobAction(run: run.id, job: id, "skip"), label: "Skip", into: &html)
            context.actionForm(
                Paths.jobAction(run: run.id, job: id, "cancel"), label: "Cancel", into: &html, danger: true)
        case .succeeded, .skipped:
            break
        }
    }

    private func attempts(of id: String, into html: inout HTML) {
        let attempts = detail.snapshot.attempts[id] ?? []
        guard !attempts.isEmpty else { return }
        html.raw("<div class=\"scroll\"><table class=\"attempts\"><thead><tr><th>#</th><th>Outcome</th>")
        // A report has no log pages to link (the failed attempt's tail is inline): no Log column.
        html.raw("<th>Started</th><th>Took</th><th>Exit</th><th>Reason</th>")
        html.raw(context.report ? "</tr></thead><tbody>" : "<th>Log</th></tr></thead><tbody>")
        for attempt in attempts {
            html.raw("<tr><td>\(attempt.number)</td><td>")
            context.badge(attempt.outcome?.rawValue ?? "running", into: &html)
            html.raw("</td><td>")
            context.time(attempt.startedAt, into: &html)
            html.raw("</td><td>")
            let end = attempt.finishedAt ?? (attempt.outcome == nil ? context.now : nil)
            html.text(end.map { Words.elapsed($0.timeIntervalSince(attempt.startedAt)) } ?? "-")
            html.raw("</td><td>")
            html.text(attempt.exitCode.map(String.init) ?? attempt.signal.map { "signal \($0)" } ?? "-")
            html.raw("</td><td class=\"wrap\">")
            html.text(attempt.reason ?? "")
            if !context.report {
                html.raw("</td><td>")
                context.link(Paths.attempt(run: run.id, job: id, number: attempt.number), "log", into: &html)
            }
            html.raw("</td></tr>")
        }
        html.raw("</tbody></table></div>")
        if context.report, let last = attempts.last, last.outcome != .succeeded, last.outcome != nil {
            reportLog(of: last, into: &html)
        }
    }

    /// In a report: the end of a failed attempt's log, since the report has no log pages.
    private func reportLog(of attempt: AttemptRecord, into html: inout HTML) {
        let path = model.logPath(of: attempt, runID: run.id)
        let tail = LogReader.tail(path: path, limit: 64 << 10)
        guard !tail.bytes.isEmpty else { return }
        var lines = String(decoding: tail.bytes, as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false)
        if lines.last == "" { lines.removeLast() }
        let shown = lines.suffix(Self.reportLogLines)
        html.raw("<details open><summary>")
        html.text(
            shown.count == 1
                ? "the last line of attempt \(attempt.number)'s log"
                : "the last \(shown.count) lines of attempt \(attempt.number)'s log")
        html.raw("</summary><pre class=\"log\">")
        var ansi = ANSIRenderer()
        ansi.render(shown.joined(separator: "\n"), into: &html)
        ansi.finish(into: &html)
        html.raw("</pre></details>")
    }

    private func outputs(of id: String, into html: inout HTML) {
        guard let outputs = detail.snapshot.outputs[id], !outputs.isEmpty else { return }
        html.raw("<dl class=\"outputs\">")
        for key in outputs.keys.sorted() {
            html.raw("<dt>")
            html.text(key)
            html.raw("</dt><dd>")
            html.text(outputs[key] ?? "")
            html.raw("</dd>")
        }
        html.raw("</dl>")
    }
}
