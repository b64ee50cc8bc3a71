import Foundation
import JobRunnerCore

/// `/`: what is going on now.
struct HomePage {
    let model: ReadModel
    let context: PageContext

    /// How many of the latest runs are looked at for failures.
    static let recentLimit = 30

    func render() async throws(StoreError) -> String {
        let runs = try await model.runs()
        let runnerPID = await model.runnerPID()
        let currentID = try await model.currentRunID()
        let current = try await currentID.asyncMap { id throws(StoreError) in
            try await model.runView(runID: id, all: false)
        }
        // Occurrences under way wait for the internet or a constraint as a run's jobs do.
        var occurrences: [RunView] = []
        for run in runs where !run.state.isFinal && run.id != currentID && run.occurrenceOf != nil {
            guard occurrences.count < Self.recentLimit else { break }
            if let view = try await model.runView(runID: run.id, all: false) { occurrences.append(view) }
        }
        let schedules = try await model.schedules()
        let stored = try await model.pipelines()
        let recent = runs.sorted { ($0.startedAt, $0.id) > ($1.startedAt, $1.id) }.prefix(Self.recentLimit)
        var failedCounts: [String: [JobState: Int]] = [:]
        for run in recent where run.state == .failed {
            failedCounts[run.id] = try await model.counts(runID: run.id)
        }
        return context.document(title: "Overview") { html in
            html.raw("<h1>Overview</h1>")
            runner(runnerPID, into: &html)
            if runs.isEmpty {
                html.raw("<p class=\"empty\">No runs yet. <code>jobrunner run</code> starts one.</p>")
            }
            underWay(runs, current: current, into: &html)
            if let current { counts(current, into: &html) }
            pipelines(current, stored: stored, into: &html)
            waits([current].compactMap { $0 } + occurrences, into: &html)
            periodic(schedules, into: &html)
            failures(
                recent.filter { $0.state == .failed }, counts: failedCounts, current: current, into: &html)
        }
    }

    private func runner(_ pid: Int32?, into html: inout HTML) {
        html.raw("<p class=\"runner\">")
        if let pid {
            html.text("A runner works on this state directory (pid \(pid)).")
        } else {
            html.prose(
                "No runner is serving this state directory: nothing runs until `jobrunner run` or `jobrunner serve` starts."
            )
        }
        html.raw("</p>")
    }

    private func underWay(_ runs: [RunRecord], current: RunView?, into html: inout HTML) {
        let open = runs.filter { !$0.state.isFinal }.sorted { $0.startedAt > $1.startedAt }
        html.raw("<section><h2>Under way</h2>")
        guard !open.isEmpty else {
            html.raw("<p class=\"empty\">No run or occurrence is under way.</p></section>")
            return
        }
        html.raw(
            "<div class=\"scroll\"><table class=\"underway\"><thead><tr><th>Run</th><th>Of</th><th>State</th><th>Started</th></tr></thead><tbody>"
        )
        for run in open {
            html.raw("<tr><td>")
            context.link(Paths.runPage(run.id), run.id, into: &html)
            html.raw("</td><td>")
            html.text(Words.of(run))
            html.raw("</td><td>")
            context.badge(run.state.rawValue, into: &html)
            html.raw("</td><td>")
            context.time(run.startedAt, into: &html, relative: true)
            html.raw("</td></tr>")
        }
        html.raw("</tbody></table></div></section>")
    }

    private func counts(_ view: RunView, into html: inout HTML) {
        let counts = view.shownCounts
        html.raw("<section><h2>Current run ")
        context.link(Paths.runPage(view.run.id), view.run.id, into: &html)
        html.raw(" ")
        context.badge(view.run.state.rawValue, into: &html)
        html.raw("</h2><ul class=\"counts\">")
        for state in JobState.allCases {
            let count = counts[state] ?? 0
            html.raw("<li class=\"count s-" + state.rawValue + (count == 0 ? " zero" : "") + "\">")
            html.raw("<span class=\"n\">\(count)</span> ")
            html.text(state.rawValue)
            html.raw("</li>")
        }
        html.raw("</ul></section>")
    }

    private func pipelines(_ view: RunView?, stored: [String: PipelineRecord], into html: inout HTML) {
        var rows = view?.pipelines ?? []
        for (name, record) in stored where record.suspended > 0 && !rows.contains(where: { $0.name == name })
        {
            rows.append(
                RunView.Pipeline(
                    name: name, maxConcurrent: PipelineDefinition.defaultMaxConcurrent,
                    suspended: record.suspended, running: 0))
        }
        rows.sort { $0.name < $1.name }
        html.raw("<section><h2>Pipelines</h2>")
        guard !rows.isEmpty else {
            html.raw("<p class=\"empty\">No pipelines yet.</p></section>")
            return
        }
        html.raw(
            "<div class=\"scroll\"><table class=\"pipelines\"><thead><tr><th>Pipeline</th><th>Running</th><th>Suspended</th>"
        )
        if context.actions { html.raw("<th>Actions</th>") }
        html.raw("</tr></thead><tbody>")
        for row in rows {
            html.raw("<tr id=\"pipeline-" + Paths.segment(row.name) + "\"><td>")
            html.text(row.name)
            html.raw("</td><td>")
            html.text(Words.pipeline(row))
            html.raw("</td><td>")
            if row.suspended > 0 {
                html.raw("<span class=\"badge s-waiting\">")
                html.text("suspended: \(row.suspended)")
                html.raw("</span>")
            } else {
                html.raw("no")
            }
            html.raw("</td>")
            if context.actions {
                html.raw("<td class=\"actions\">")
                context.actionForm(Paths.pipelineAction(row.name, "suspend"), label: "Suspend", into: &html)
                if row.suspended > 0 {
                    context.actionForm(Paths.pipelineAction(row.name, "resume"), label: "Resume", into: &html)
                }
                html.raw("</td>")
            }
            html.raw("</tr>")
        }
        html.raw("</tbody></table></div></section>")
    }

    /// The jobs of the current run and of the occurrences under way that wait for the internet
    /// or for a constraint: what the read model knows of connectivity and constraints.
    private func waits(_ views: [RunView], into html: inout HTML) {
        guard !views.isEmpty else { return }
        var internet: [String] = []
        var constraints: [String: [String]] = [:]
        for view in views {
            view.forEachJob { job in
                switch job.waitingFor {
                case .internet: internet.append(job.record.jobID)
                case .constraint(let name): constraints[name, default: []].append(job.record.jobID)
                default: break
                }
            }
        }
        html.raw("<section><h2>Connectivity and constraints</h2><ul class=\"plain\">")
        html.raw("<li>")
        if internet.isEmpty {
            html.text("No job waits for the internet.")
        } else {
            html.text(
                "\(internet.count) job\(internet.count == 1 ? " waits" : "s wait") for the internet (the probe says offline): "
            )
            html.text(internet.prefix(20).joined(separator: ", ") + (internet.count > 20 ? ", …" : ""))
        }
        html.raw("</li>")
        if constraints.isEmpty {
            html.raw("<li>No job waits for a constraint.</li>")
        }
        for (name, jobs) in constraints.sorted(by: { $0.key < $1.key }) {
            html.raw("<li>")
            html.text("Constraint \(name) is not satisfied; waiting: ")
            html.text(jobs.prefix(20).joined(separator: ", ") + (jobs.count > 20 ? ", …" : ""))
            html.raw("</li>")
        }
        html.raw("</ul></section>")
    }

    private func periodic(_ schedules: [String: ScheduleRecord], into html: inout HTML) {
        guard !schedules.isEmpty else { return }
        html.raw(
            "<section><h2>Periodic jobs</h2><div class=\"scroll\"><table class=\"periodic\"><thead><tr><th>Job</th>"
        )
        html.raw("<th>Schedule</th><th>Last result</th><th>Next due</th>")
        if context.actions { html.raw("<th>Actions</th>") }
        html.raw("</tr></thead><tbody>")
        for record in schedules.values.sorted(by: { $0.jobID < $1.jobID }) {
            html.raw("<tr><td>")
            context.link(Paths.periodicJob(record.jobID), record.jobID, into: &html)
            html.raw("</td><td>")
            html.text(record.schedule)
            html.raw("</td><td>")
            if let result = record.lastResult {
                context.badge(result.rawValue, into: &html)
                if let run = record.lastRunID {
                    html.raw(" ")
                    context.link(Paths.runPage(run), run, into: &html, class: "muted")
                }
            } else {
                html.raw("no occurrence finished yet")
            }
            html.raw("</td><td>")
            if let next = record.nextDue {
                context.time(next, into: &html, relative: true)
            } else {
                html.raw("no next date")
            }
            html.raw("</td>")
            if context.actions {
                html.raw("<td class=\"actions\">")
                context.actionForm(Paths.trigger(record.jobID), label: "Trigger", into: &html)
                html.raw("</td>")
            }
            html.raw("</tr>")
        }
        html.raw("</tbody></table></div></section>")
    }

    private func failures(
        _ runs: [RunRecord], counts: [String: [JobState: Int]], current: RunView?, into html: inout HTML
    ) {
        html.raw("<section><h2>Recent failures</h2>")
        var failedJobs: [RunView.Job] = []
        current?.forEachJob { job in
            if job.record.failsRun || job.record.isAllowedFailure { failedJobs.append(job) }
        }
        if runs.isEmpty && failedJobs.isEmpty {
            html.raw("<p class=\"empty\">No failures among the latest runs.</p></section>")
            return
        }
        if let current, !failedJobs.isEmpty {
            html.raw("<ul class=\"plain\">")
            let states = current.overview.states
            for job in failedJobs.prefix(20) {
                html.raw("<li>")
                context.badge(job.state.rawValue, into: &html)
                html.raw(" ")
                context.link(
                    Paths.runPage(current.run.id) + "#" + Paths.anchor(job.record.jobID), job.record.jobID,
                    into: &html)
                html.raw(" <span class=\"muted\">")
                html.prose(Words.detail(of: job, states: states, now: context.now))
                html.raw("</span></li>")
            }
            html.raw("</ul>")
        }
        if !runs.isEmpty {
            html.raw(
                "<div class=\"scroll\"><table class=\"failures\"><thead><tr><th>Run</th><th>Of</th><th>Started</th><th>Jobs</th></tr></thead><tbody>"
            )
            for run in runs {
                html.raw("<tr><td>")
                context.link(Paths.runPage(run.id), run.id, into: &html)
                html.raw("</td><td>")
                html.text(Words.of(run))
                html.raw("</td><td>")
                if run.neverStarted {
                    html.text("-")
                } else {
                    context.time(run.startedAt, into: &html, relative: true)
                }
                html.raw("</td><td class=\"wrap\">")
                html.text(Words.counts(counts[run.id] ?? [:]))
                html.raw("</td></tr>")
            }
            html.raw("</tbody></table></div>")
        }
        html.raw("</section>")
    }
}

extension Optional {
    /// The value mapped by an async function that throws a store error, or nil.
    func asyncMap<Result>(_ transform: (Wrapped) async throws(StoreError) -> Result?) async throws(StoreError)
        -> Result?
    {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
