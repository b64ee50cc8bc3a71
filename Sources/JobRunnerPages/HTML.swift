/// HTML made by appending to one string: text is escaped on the way in, so nothing a job file,
/// an output, a reason or a log holds can become markup.
struct HTML {
    /// The markup so far.
    private(set) var text = ""

    init(capacity: Int = 16 << 10) {
        text.reserveCapacity(capacity)
    }

    /// Appends markup written by this module (never anything read from the store).
    mutating func raw(_ markup: String) {
        text += markup
    }

    /// Appends text, escaped.
    mutating func text(_ value: some StringProtocol) {
        Self.escape(value, into: &text)
    }

    /// Appends words as the command line says them, escaped, each `` `span` `` between backticks
    /// set as `<code>` (the backticks dropped), as a terminal reader reads them.
    mutating func prose(_ value: some StringProtocol) {
        let parts = value.split(separator: "`", omittingEmptySubsequences: false)
        // An odd number of backticks: the last one is text.
        let paired = parts.count % 2 == 1 ? parts.count : parts.count - 1
        for (index, part) in parts.enumerated() {
            if index >= paired {
                text += "`"
                text(part)
            } else if index % 2 == 1 {
                text += "<code>"
                text(part)
                text += "</code>"
            } else {
                text(part)
            }
        }
    }

    /// Appends `<tag attributes>text</tag>`, the text escaped.
    mutating func element(_ tag: String, _ content: some StringProtocol, class name: String? = nil) {
        text += "<" + tag
        if let name { text += " class=\"" + name + "\"" }
        text += ">"
        text(content)
        text += "</" + tag + ">"
    }

    /// Appends a link, both the address and the text escaped.
    mutating func link(_ href: String, _ content: some StringProtocol, class name: String? = nil) {
        text += "<a href=\""
        text(href)
        text += "\""
        if let name { text += " class=\"" + name + "\"" }
        text += ">"
        text(content)
        text += "</a>"
    }

    /// `value` with `&`, `<`, `>`, `"` and `'` written as references: safe in text and in a
    /// quoted attribute alike.
    static func escape(_ value: some StringProtocol) -> String {
        var result = ""
        escape(value, into: &result)
        return result
    }

    static func escape(_ value: some StringProtocol, into result: inout String) {
        // Most values need nothing: copied whole.
        guard
            value.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 })
        else {
            result += value
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.unicodeScalars.append(scalar)
            }
        }
    }
}

/// Addresses of the pages and the API, as the server routes them (the contract between the
/// pages and the server).
enum Paths {
    /// A path segment with everything but the characters ids are made of percent-encoded.
    static func segment(_ value: String) -> String {
        var result = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                UInt8(ascii: "."),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF")
                result += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 15)])
            }
        }
        return result
    }

    static func runPage(_ id: String) -> String { "/runs/" + segment(id) }
    static func periodicJob(_ id: String) -> String { "/jobs/" + segment(id) }
    static func attempt(run: String, job: String, number: Int) -> String {
        runPage(run) + "/jobs/" + segment(job) + "/attempts/\(number)"
    }
    static func log(run: String, job: String, number: Int) -> String {
        "/api/v1" + attempt(run: run, job: job, number: number) + "/log"
    }
    static func jobAction(run: String, job: String, _ action: String) -> String {
        "/api/v1" + runPage(run) + "/jobs/" + segment(job) + "/" + action
    }
    static func pipelineAction(_ name: String, _ action: String) -> String {
        "/api/v1/pipelines/" + segment(name) + "/" + action
    }
    static func trigger(_ job: String) -> String { "/api/v1/jobs/" + segment(job) + "/trigger" }

    /// `/runs` with its filters and page as a query.
    static func runs(job: String?, state: String?, page: Int) -> String {
        var query: [String] = []
        if let job { query.append("job=" + segment(job)) }
        if let state { query.append("state=" + segment(state)) }
        if page > 1 { query.append("page=\(page)") }
        return "/runs" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    /// An element id for a job (`job-build`), for in-page links from the graph.
    static func anchor(_ job: String) -> String { "job-" + segment(job) }
}
