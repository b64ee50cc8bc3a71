import Foundation
import JobRunnerCore

/// The run's attempts on a time axis (a Gantt chart) as SVG: one row per attempt, in the order
/// they started, each bar coloured by its outcome; a running attempt reaches to now.
struct TimelineSection {
    let detail: RunDetail
    let context: PageContext

    /// The most rows drawn; the page says when there are more.
    static let rowLimit = 300
    static let labelWidth = 190.0
    static let chartWidth = 760.0
    static let rowHeight = 20.0
    static let axisHeight = 24.0

    struct Row {
        var job: String
        var attempt: AttemptRecord
    }

    func render(into html: inout HTML) {
        var rows: [Row] = []
        let big = detail.run.jobIDs.count > RunPage.listLimit
        for (job, attempts) in detail.snapshot.attempts {
            if big, detail.snapshot.jobs[job]?.state == .succeeded { continue }
            for attempt in attempts { rows.append(Row(job: job, attempt: attempt)) }
        }
        rows.sort {
            ($0.attempt.startedAt, $0.job, $0.attempt.number) < (
                $1.attempt.startedAt, $1.job, $1.attempt.number
            )
        }
        guard !rows.isEmpty else {
            html.raw("<p class=\"empty\">No attempt has started yet.</p>")
            return
        }
        let total = rows.count
        if total > Self.rowLimit {
            rows = Array(rows.suffix(Self.rowLimit))
        }
        if big || total > Self.rowLimit {
            html.raw("<p class=\"notice\">")
            var words = big ? "The attempts of the jobs that did not succeed" : "The attempts"
            if total > Self.rowLimit { words += ": the latest \(Self.rowLimit) of \(total)" }
            html.text(words + ".")
            html.raw("</p>")
        }
        let start = rows.map(\.attempt.startedAt).min() ?? detail.run.startedAt
        let end = rows.map { $0.attempt.finishedAt ?? context.now }.max() ?? context.now
        let span = max(1, end.timeIntervalSince(start))
        let width = Self.labelWidth + Self.chartWidth + 48
        let height = Self.axisHeight + Double(rows.count) * Self.rowHeight + 8
        func x(_ date: Date) -> Double {
            Self.labelWidth + date.timeIntervalSince(start) / span * Self.chartWidth
        }
        html.raw("<div class=\"scroll timeline\">")
        html.raw(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" role=\"img\" aria-label=\"When each attempt ran\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\">"
        )
        // The axis: ticks at a round step, labelled by the time since the first start.
        let step = Self.step(for: span)
        html.raw("<g class=\"axis\">")
        var tick = 0.0
        while tick <= span + 0.001 {
            let position = Self.labelWidth + tick / span * Self.chartWidth
            html.raw(
                "<line x1=\"\(GraphSection.number(position))\" y1=\"\(Int(Self.axisHeight - 6))\" x2=\"\(GraphSection.number(position))\" y2=\"\(Int(height))\"/>"
            )
            html.raw("<text x=\"\(GraphSection.number(position))\" y=\"14\">")
            html.text(tick == 0 ? Words.clock(start) : "+" + Words.elapsed(tick))
            html.raw("</text>")
            tick += step
        }
        html.raw("</g>")
        for (index, row) in rows.enumerated() {
            let y = Self.axisHeight + Double(index) * Self.rowHeight
            let attempt = row.attempt
            let outcome = attempt.outcome?.rawValue ?? "running"
            let left = x(attempt.startedAt)
            let right = max(left + 2, x(attempt.finishedAt ?? context.now))
            let took = Words.elapsed((attempt.finishedAt ?? context.now).timeIntervalSince(attempt.startedAt))
            html.raw("<g class=\"bar s-" + PageContext.stateClass(outcome) + "\"><title>")
            html.text("\(row.job) attempt \(attempt.number): \(outcome), \(took)")
            html.raw("</title><text class=\"label\" x=\"4\" y=\"\(GraphSection.number(y + 14))\">")
            html.text(Self.label(job: row.job, attempt: attempt.number))
            html.raw(
                "</text><rect x=\"\(GraphSection.number(left))\" y=\"\(GraphSection.number(y + 3))\" width=\"\(GraphSection.number(right - left))\" height=\"\(Int(Self.rowHeight - 6))\" rx=\"3\"/></g>"
            )
        }
        html.raw("</svg></div>")
        legend(into: &html)
    }

    /// A row's label: the job's name, cut to fit, and always the attempt's number.
    static func label(job: String, attempt: Int) -> String {
        let number = " #\(attempt)"
        return GraphSection.shortened(job, to: max(4, 26 - number.count)) + number
    }

    /// The bars' colours: one per attempt outcome.
    static let outcomes: [(state: String, words: String)] = [
        ("succeeded", "succeeded"), ("failed", "failed"), ("timeout", "timed out"),
        ("tempfail", "temporary failure (exit 75), retried"), ("interrupted", "interrupted"),
        ("skipped", "skipped"),
        ("running", "running"),
    ]

    private func legend(into html: inout HTML) {
        html.raw("<ul class=\"legend\" aria-label=\"Attempt outcomes\">")
        for (state, words) in Self.outcomes {
            html.raw("<li><span class=\"swatch s-" + state + "\"></span>")
            html.text(words)
            html.raw("</li>")
        }
        html.raw("</ul>")
    }

    /// A round tick step that gives at most about 8 ticks over `span` seconds.
    static func step(for span: Double) -> Double {
        let steps: [Double] = [
            0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21_600, 43_200,
            86_400,
        ]
        return steps.first { span / $0 <= 8 } ?? span / 8
    }
}
