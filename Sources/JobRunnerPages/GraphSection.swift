import Foundation
import JobRunnerCore

/// The run's graph as SVG: each job a box coloured by its state, linked to its entry below.
/// A run of more than ``limit`` jobs is drawn collapsed, and the page says how.
struct GraphSection {
    let detail: RunDetail
    let context: PageContext

    /// The most jobs drawn one by one.
    static let limit = 200

    /// What is drawn: the nodes with their labels, state and link, and the edges between them.
    struct Drawing {
        var labels: [String]
        var titles: [String]
        var states: [String]
        var anchors: [String?]
        var edges: [(from: Int, to: Int)]
        /// What the page says about a collapsed graph; nil when every job is drawn.
        var note: String?
    }

    func render(into html: inout HTML) {
        let drawing = Self.drawing(of: detail.snapshot, shown: detail.shownStates)
        if let note = drawing.note {
            html.raw("<p class=\"notice\">")
            html.text(note)
            html.raw("</p>")
        }
        let layout = GraphLayout(count: drawing.labels.count, edges: drawing.edges)
        html.raw("<div class=\"scroll graph\">")
        html.raw(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"graph\" role=\"img\" aria-label=\"The run's jobs and what each needs\" "
        )
        html.raw("width=\"\(Int(layout.width))\" height=\"\(Int(layout.height))\" ")
        html.raw("viewBox=\"0 0 \(Int(layout.width)) \(Int(layout.height))\">")
        html.raw(
            "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0 0L10 5L0 10z\" class=\"arrowhead\"/></marker></defs>"
        )
        html.raw("<g class=\"edges\">")
        for edge in layout.edges {
            html.raw("<path d=\"" + Self.path(edge.points) + "\" marker-end=\"url(#arrow)\"/>")
        }
        html.raw("</g><g class=\"nodes\">")
        for (index, box) in layout.nodes.enumerated() {
            let anchor = drawing.anchors[index]
            if let anchor { html.raw("<a href=\"#" + anchor + "\">") }
            html.raw("<g class=\"node s-" + PageContext.stateClass(drawing.states[index]) + "\">")
            html.raw("<title>")
            html.text(drawing.titles[index])
            html.raw("</title>")
            html.raw(
                "<rect x=\"\(Self.number(box.x))\" y=\"\(Self.number(box.y))\" width=\"\(Self.number(box.width))\" height=\"\(Self.number(box.height))\" rx=\"6\"/>"
            )
            html.raw(
                "<text x=\"\(Self.number(box.x + box.width / 2))\" y=\"\(Self.number(box.y + box.height / 2 + 4))\">"
            )
            html.text(Self.shortened(drawing.labels[index], to: 22))
            html.raw("</text></g>")
            if anchor != nil { html.raw("</a>") }
        }
        html.raw("</g></svg></div>")
        legend(into: &html)
    }

    private func legend(into html: inout HTML) {
        html.raw("<ul class=\"legend\">")
        for state in JobState.allCases {
            html.raw("<li><span class=\"swatch s-" + state.rawValue + "\"></span>")
            html.text(state.rawValue)
            html.raw("</li>")
        }
        html.raw("</ul>")
    }

    /// The nodes to draw: every job of a run of up to ``limit``; else the jobs that did not
    /// succeed with their direct needs and dependents, when that is at most ``limit``; else one
    /// node per pipeline.
    /// - Parameter shown: each job's state as `status` shows it.
    static func drawing(of snapshot: RunSnapshot, shown: [String: JobState]) -> Drawing {
        let ids = snapshot.run.jobIDs.filter { snapshot.jobs[$0] != nil }
        if ids.count <= limit { return jobs(ids, of: snapshot, shown: shown, note: nil) }
        let focus = ids.filter { snapshot.jobs[$0]?.state != .succeeded }
        if !focus.isEmpty {
            var chosen = Set(focus)
            let focused = Set(focus)
            for id in ids {
                guard let record = snapshot.jobs[id] else { continue }
                if focused.contains(id) {
                    chosen.formUnion(record.needs.filter { snapshot.jobs[$0] != nil })
                } else if record.needs.contains(where: focused.contains) {
                    chosen.insert(id)
                }
                if chosen.count > limit { break }
            }
            if chosen.count <= limit {
                return jobs(
                    ids.filter(chosen.contains), of: snapshot, shown: shown,
                    note:
                        "The run has \(ids.count) jobs, too many to draw one by one: the graph shows the \(focus.count) that did not succeed and the jobs next to them (\(chosen.count) in all)."
                )
            }
        }
        return pipelines(ids, of: snapshot)
    }

    private static func jobs(
        _ ids: [String], of snapshot: RunSnapshot, shown: [String: JobState], note: String?
    ) -> Drawing {
        var index: [String: Int] = [:]
        for (position, id) in ids.enumerated() { index[id] = position }
        var edges: [(from: Int, to: Int)] = []
        var states: [String] = []
        var titles: [String] = []
        for (position, id) in ids.enumerated() {
            let record = snapshot.jobs[id]
            let state = (shown[id] ?? record?.state)?.rawValue ?? "pending"
            states.append(state)
            titles.append("\(id): \(state)" + (record?.reason.map { " (\($0.words))" } ?? ""))
            for need in record?.needs ?? [] {
                if let from = index[need] { edges.append((from, position)) }
            }
        }
        return Drawing(
            labels: ids, titles: titles, states: states, anchors: ids.map(Paths.anchor), edges: edges,
            note: note)
    }

    /// How bad a state is, for a pipeline's colour: the worst of its jobs.
    private static let severity: [JobState] = [
        .succeeded, .skipped, .pending, .waiting, .running, .cancelled, .blocked, .failed,
    ]

    private static func pipelines(_ ids: [String], of snapshot: RunSnapshot) -> Drawing {
        var pipelineOf: [String: String] = [:]
        var counts: [String: [JobState: Int]] = [:]
        for id in ids {
            guard let record = snapshot.jobs[id] else { continue }
            pipelineOf[id] = record.pipeline
            counts[record.pipeline, default: [:]][record.state, default: 0] += 1
        }
        let names = counts.keys.sorted().prefix(limit)
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() { index[name] = position }
        var edgeSet = Set<[Int]>()
        for id in ids {
            guard let record = snapshot.jobs[id], let to = index[record.pipeline] else { continue }
            for need in record.needs {
                if let other = pipelineOf[need], let from = index[other], from != to {
                    edgeSet.insert([from, to])
                }
            }
        }
        let states = names.map { name in
            severity.last { (counts[name]?[$0] ?? 0) > 0 }?.rawValue ?? "pending"
        }
        let labels = names.map { name in
            let total = counts[name]?.values.reduce(0, +) ?? 0
            return "\(name): \(total) jobs"
        }
        let titles = names.map { name in "pipeline \(name): " + Words.counts(counts[name] ?? [:]) }
        return Drawing(
            labels: labels, titles: titles, states: states, anchors: names.map { _ in nil },
            edges: edgeSet.sorted { ($0[0], $0[1]) < ($1[0], $1[1]) }.map { ($0[0], $0[1]) },
            note:
                "The run has \(ids.count) jobs, too many to draw one by one: the graph shows its \(names.count) pipeline\(names.count == 1 ? "" : "s"), each coloured by the worst state of its jobs; the jobs that did not succeed are listed below."
        )
    }

    /// An SVG path through the points: straight down through placeholders, a curve between
    /// layers (which stays between the two layers, clear of their boxes).
    static func path(_ points: [GraphLayout.Point]) -> String {
        guard let first = points.first else { return "" }
        var d = "M\(number(first.x)) \(number(first.y))"
        var previous = first
        for point in points.dropFirst() {
            if point.x == previous.x {
                d += "L\(number(point.x)) \(number(point.y))"
            } else {
                let middle = (previous.y + point.y) / 2
                d +=
                    "C\(number(previous.x)) \(number(middle)) \(number(point.x)) \(number(middle)) \(number(point.x)) \(number(point.y))"
            }
            previous = point
        }
        return d
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }

    static func shortened(_ text: String, to length: Int) -> String {
        text.count <= length ? text : String(text.prefix(length - 1)) + "…"
    }
}
