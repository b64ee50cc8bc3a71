import Foundation
import JobRunnerCore

/// `/runs/ID/jobs/JOB/attempts/N`: one attempt's log, its tail first when it is large, with a
/// download of the raw text; `app.js` follows it while the attempt runs.
struct AttemptPage {
    let run: RunRecord
    let job: JobRecord
    let attempt: AttemptRecord
    /// How many attempts the job has.
    let count: Int
    let model: ReadModel
    let context: PageContext

    /// How much of a log the page shows at most: its end.
    static let shownBytes: UInt64 = 256 << 10

    func render() -> String {
        let path = model.logPath(of: attempt, runID: run.id)
        var tail = LogReader.tail(path: path, limit: Self.shownBytes)
        if attempt.outcome == nil {
            let unfinished = LogReader.unfinishedUTF8(tail.bytes)
            tail.bytes.removeLast(unfinished)
            tail.size -= UInt64(unfinished)
        }
        let download = Paths.log(run: run.id, job: job.jobID, number: attempt.number)
        return context.document(title: "\(job.jobID) attempt \(attempt.number)") { html in
            html.raw("<p class=\"crumbs\">")
            context.link(Paths.runPage(run.id), "run " + run.id, into: &html)
            html.raw(" › ")
            context.link(Paths.runPage(run.id) + "#" + Paths.anchor(job.jobID), job.jobID, into: &html)
            html.raw("</p><h1>")
            html.text(job.jobID)
            html.text(" · attempt \(attempt.number) of \(count)")
            html.raw(" ")
            context.badge(attempt.outcome?.rawValue ?? "running", into: &html)
            html.raw("</h1><p class=\"meta\">started ")
            context.time(attempt.startedAt, into: &html, relative: true)
            if let finished = attempt.finishedAt {
                html.raw(" · took ")
                html.text(Words.elapsed(finished.timeIntervalSince(attempt.startedAt)))
            }
            if let code = attempt.exitCode { html.text(" · exit \(code)") }
            if let signal = attempt.signal { html.text(" · signal \(signal)") }
            if let reason = attempt.reason {
                html.raw(" · ")
                html.text(reason)
            }
            html.raw("</p>")
            navigation(into: &html)
            html.raw("<p class=\"log-head\">")
            if let problem = attempt.logProblem {
                // A log a full disk swallowed is said, never shown as an empty one.
                html.raw("<span class=\"notice\">")
                html.text("This attempt's \(problem.replacingOccurrences(of: "its log", with: "log")). ")
                html.raw("</span>")
            }
            if tail.start > 0 {
                html.raw("<span class=\"notice\">")
                html.text(
                    "The log is \(Words.bytes(tail.size)); this shows its last \(Words.bytes(tail.size - tail.start)). "
                )
                html.raw("</span>")
            } else if tail.size == 0 && attempt.logProblem == nil {
                html.raw("<span class=\"muted\">")
                html.text(
                    attempt.outcome == nil
                        ? "No output yet."
                        : "This attempt wrote no output; it ended \(attempt.outcome?.rawValue ?? "")."
                )
                html.raw("</span> ")
            }
            html.link(
                download, tail.start > 0 ? "Download the whole log" : "Download the raw text", class: "button"
            )
            html.raw(" <span id=\"follow\" class=\"muted\"></span></p>")
            var renderer = ANSIRenderer()
            var body = HTML(capacity: tail.bytes.count + tail.bytes.count / 8)
            renderer.render(String(decoding: tail.bytes, as: UTF8.self), into: &body)
            renderer.finish(into: &body)
            html.raw("<pre id=\"log\" class=\"log\" tabindex=\"0\" data-src=\"")
            html.text(download)
            html.raw("\" data-offset=\"\(tail.size)\" data-running=\"\(attempt.outcome == nil)\" data-job=\"")
            html.text(job.jobID)
            html.raw("\" data-run=\"")
            html.text(run.id)
            html.raw("\" data-sgr=\"" + renderer.classes + "\">")
            html.raw(body.text)
            html.raw("</pre>")
        }
    }

    /// Links to the other attempts of the job.
    private func navigation(into html: inout HTML) {
        guard count > 1 else { return }
        html.raw("<nav class=\"filters\" aria-label=\"Attempts\"><span class=\"muted\">Attempts:</span>")
        for number in 1...count {
            html.link(
                Paths.attempt(run: run.id, job: job.jobID, number: number), "\(number)",
                class: number == attempt.number ? "chip on" : "chip")
        }
        html.raw("</nav>")
    }
}
