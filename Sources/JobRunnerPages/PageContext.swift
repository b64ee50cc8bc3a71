import Foundation
import JobRunnerCore

/// What a page needs while it is written: the request's settings, its own address (where an
/// action's form returns to), and whether it is a served page or a self-contained report.
struct PageContext {
    var settings: PageSettings
    /// The page's own path and query, for the forms' `return` field.
    var path: String
    /// A report (`report --html`): one file, its CSS inline, no script, no forms, no links to
    /// the server.
    var report = false

    var now: Date { settings.now }
    /// Whether action forms are shown.
    var actions: Bool { settings.actions && !report }

    init(settings: PageSettings, path: String) {
        self.settings = settings
        self.path = path
    }

    /// A report's context: read-only, no script.
    static func report(now: Date) -> PageContext {
        var context = PageContext(
            settings: PageSettings(csrfToken: nil, readOnly: true, live: false, now: now), path: "/")
        context.report = true
        return context
    }

    /// A link to another page; in a report, where no server answers, the text alone.
    func link(_ href: String, _ text: some StringProtocol, into html: inout HTML, class name: String? = nil) {
        if report {
            html.element("span", text, class: name)
        } else {
            html.link(href, text, class: name)
        }
    }

    /// A form that posts to an action of the API, with the CSRF token and the page to return to;
    /// nothing on a read-only page or in a report.
    func actionForm(_ action: String, label: String, into html: inout HTML, danger: Bool = false) {
        guard actions, let token = settings.csrfToken else { return }
        html.raw("<form method=\"post\" class=\"action\" action=\"")
        html.text(action)
        html.raw("\"><input type=\"hidden\" name=\"csrf\" value=\"")
        html.text(token)
        html.raw("\"><input type=\"hidden\" name=\"return\" value=\"")
        html.text(path)
        html.raw("\"><button type=\"submit\"")
        if danger { html.raw(" class=\"danger\"") }
        html.raw(">")
        html.text(label)
        html.raw("</button></form>")
    }

    /// `<time>` with the moment in `status`'s words and the ISO date in its attribute.
    func time(_ date: Date?, into html: inout HTML, relative: Bool = false) {
        guard let date else {
            html.raw("-")
            return
        }
        if report {
            // A file read later, anywhere: the date in full, nothing relative to when it was written.
            html.raw("<time datetime=\"" + Words.iso(date) + "\">")
            html.text(Words.date(date))
            html.raw("</time>")
            return
        }
        html.raw("<time datetime=\"" + Words.iso(date) + "\" title=\"")
        html.text(Words.relative(date, now: now))
        html.raw("\">")
        html.text(Words.moment(date, now: now))
        html.raw("</time>")
        if relative {
            html.raw(" <span class=\"muted\">(")
            html.text(Words.relative(date, now: now))
            html.raw(")</span>")
        }
    }

    /// A state as a coloured badge.
    func badge(_ state: String, into html: inout HTML) {
        html.raw("<span class=\"badge s-" + Self.stateClass(state) + "\">")
        html.text(state)
        html.raw("</span>")
    }

    /// The CSS class suffix of a state or outcome: its name when it is one of ours, else `other`.
    static func stateClass(_ state: String) -> String {
        let known: Set<String> = [
            "pending", "waiting", "running", "succeeded", "failed", "skipped", "blocked", "cancelled",
            "stopped", "missed", "timeout", "tempfail", "interrupted",
        ]
        return known.contains(state) ? state : "other"
    }

    /// The whole document around `body`.
    func document(title: String, body: (inout HTML) -> Void) -> String {
        var html = HTML()
        html.raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        html.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
        html.raw("<meta name=\"color-scheme\" content=\"light dark\">")
        html.raw("<title>")
        html.text(title)
        html.raw(" · jobrunner</title>")
        if report {
            html.raw("<style>" + Assets.css + "</style>")
        } else {
            html.raw("<link rel=\"stylesheet\" href=\"/assets/app.css\">")
            html.raw("<link rel=\"icon\" href=\"/assets/favicon.svg\" type=\"image/svg+xml\">")
            if settings.live { html.raw("<script src=\"/assets/app.js\" defer></script>") }
        }
        html.raw("</head><body")
        if report { html.raw(" class=\"report\"") }
        html.raw("><header class=\"top\"><span class=\"brand\">jobrunner</span>")
        if !report {
            html.raw("<nav><a href=\"/\">Overview</a><a href=\"/runs\">Runs</a></nav>")
            if settings.readOnly { html.raw("<span class=\"muted\">read-only</span>") }
        } else {
            html.raw("<span class=\"muted\">report written ")
            html.text(Words.date(now))
            html.raw("</span>")
        }
        html.raw("</header><main id=\"main\">")
        if let message = settings.message, !message.isEmpty, !report {
            html.raw(
                settings.messageIsError
                    ? "<p class=\"notice error\" role=\"alert\">" : "<p class=\"notice\" role=\"status\">")
            for (index, line) in message.split(separator: "\n").enumerated() {
                if index > 0 { html.raw("<br>") }
                html.prose(line)
            }
            html.raw("</p>")
        }
        body(&html)
        html.raw("</main></body></html>\n")
        return html.text
    }
}
