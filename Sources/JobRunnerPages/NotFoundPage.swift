import Foundation
import JobRunnerCore

/// The page of an address that names nothing: what it asked for, in words, with links to where
/// the reader can look instead.
struct NotFoundPage {
    let model: ReadModel
    let context: PageContext
    let path: [String]

    func render() async -> String {
        // A one-shot job asked for as a periodic one: the run it is in.
        var oneShotRun: String?
        if path.count == 2, path[0] == "jobs", let current = try? await model.currentRunID(),
            let run = try? await model.run(current), run.jobIDs.contains(path[1])
        {
            oneShotRun = current
        }
        var runExists = false
        if path.count == 6, let run = try? await model.run(path[1]) { runExists = run.id == path[1] }
        return context.document(title: "Not found") { html in
            html.raw("<h1>Not found</h1><p>")
            switch path.count {
            case 2 where path[0] == "runs":
                html.text("There is no run '\(path[1])' in this state directory (pruned, or never there): ")
                html.link(Paths.runs(job: nil, state: nil, page: 1), "Runs")
                html.text(" lists those kept.")
            case 6 where path[0] == "runs" && path[2] == "jobs" && path[4] == "attempts":
                html.text("Run '\(path[1])' has no job '\(path[3])' with an attempt \(path[5]): ")
                if runExists {
                    html.link(Paths.runPage(path[1]), "the run's page")
                    html.text(" lists its jobs and their attempts.")
                } else {
                    html.text("there is no such run; ")
                    html.link(Paths.runs(job: nil, state: nil, page: 1), "Runs")
                    html.text(" lists those kept.")
                }
            case 2 where path[0] == "jobs":
                if let run = oneShotRun {
                    html.text(
                        "\(path[1]) is a one-shot job, not a periodic one: it has no page of its own; it is on "
                    )
                    html.link(Paths.runPage(run) + "#" + Paths.anchor(path[1]), "run \(run)'s page")
                    html.text(".")
                } else {
                    html.text("There is no periodic job '\(path[1])' here: ")
                    html.link("/", "the overview")
                    html.text(" lists the periodic jobs.")
                }
            default:
                html.text("Nothing is at /\(path.joined(separator: "/")): the pages are ")
                html.link("/", "the overview")
                html.text(", ")
                html.link(Paths.runs(job: nil, state: nil, page: 1), "Runs")
                html.text(", a run's page, an attempt's log and a periodic job's page.")
            }
            html.raw("</p>")
        }
    }
}
