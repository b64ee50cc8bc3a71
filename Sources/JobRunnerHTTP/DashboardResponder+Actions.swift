import Foundation
import HTTPTypes
import Hummingbird
import JobRunnerCore
import NIOCore

extension DashboardResponder {
    /// `POST /api/v1/…`: an operator action, through the same ``Operator`` as the commands,
    /// answering what the command would print. A form post (the pages) needs the CSRF token and
    /// is answered `303 See Other` to its `return` path with the message; a JSON client gets
    /// `{"ok": true, "message": …}` or a 4xx `{"error": …}`.
    func action(_ request: Request, path: [String]) async throws -> Response {
        guard path.first == "v1" else {
            return Self.error(.notFound, "no such route; the API is under /api/v1")
        }
        let rest = Array(path.dropFirst())
        let verb = rest.last ?? ""
        enum Target {
            case job(run: String, job: String, OperatorRequest.Kind)
            case pipeline(String, suspend: Bool)
            case trigger(String)
        }
        let target: Target
        switch rest.count {
        case 5 where rest[0] == "runs" && rest[2] == "jobs":
            guard let kind = OperatorRequest.Kind(rawValue: verb) else {
                return Self.error(.notFound, "no action '\(verb)' on a job: retry, skip or cancel")
            }
            target = .job(run: rest[1], job: rest[3], kind)
        case 3 where rest[0] == "pipelines" && (verb == "suspend" || verb == "resume"):
            target = .pipeline(rest[1], suspend: verb == "suspend")
        case 3 where rest[0] == "jobs" && verb == "trigger":
            target = .trigger(rest[1])
        default:
            return Self.error(
                .notFound, "no such action: POST \(request.uri.path) (see /api/v1/openapi.json)")
        }
        let names: [String] =
            switch target {
            case .job(let run, let job, _): [run, job]
            case .pipeline(let name, _): [name]
            case .trigger(let job): [job]
            }
        if let unusable = names.first(where: { !Self.usable($0) }) {
            return Self.error(.notFound, "no run, job or pipeline '\(unusable)'")
        }
        var request = request
        let isForm =
            request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded")
            ?? false
        let form = isForm ? try await Self.form(&request) : [:]
        if isForm {
            guard Access.same(form["csrf"] ?? "", access.csrf) else {
                return Self.error(
                    .forbidden, "the form's CSRF token is missing or stale: reload the page and try again")
            }
        } else if let refusal = crossSite(request) {
            return refusal
        }
        guard let `operator` else {
            return Self.error(
                .forbidden, "this dashboard is read-only (--http-read-only): it takes no action")
        }
        let lines = Locked<[Operator.Line]>([])
        let say: @Sendable (Operator.Line) -> Void = { line in lines.withLock { $0.append(line) } }
        let outcome: Operator.Outcome
        switch target {
        case .job(let run, let job, let kind):
            outcome = await `operator`.act(kind, jobs: [job], runID: run, say: say)
        case .pipeline(let name, let suspend):
            outcome =
                suspend ? await `operator`.suspend(name, say: say) : await `operator`.resume(name, say: say)
        case .trigger(let job):
            outcome = await `operator`.trigger([job], say: say)
        }
        let said = lines.withLock { $0 }
        let messages = said.compactMap { if case .message(let text) = $0 { text } else { nil } }
        let problems = said.compactMap { if case .problem(let text) = $0 { text } else { nil } }
        let status: HTTPResponse.Status =
            switch outcome {
            case .done: .ok
            case .notFound: .notFound
            case .refused: .conflict
            case .storeFailed: .internalServerError
            }
        if isForm {
            let text = status == .ok ? messages.joined(separator: "\n") : problems.joined(separator: "\n")
            let id = notices.put(Notices.Notice(text: text, isError: status != .ok))
            // 303 See Other: the browser fetches the page again with GET.
            return Response.redirect(to: Self.returnPath(form["return"], notice: id), type: .normal)
        }
        if status == .ok {
            return Self.json(
                .ok,
                Array(
                    "{\"ok\": true, \"message\": \(JSONValue.quote(messages.joined(separator: "\n")))}\n".utf8
                ))
        }
        return Self.error(status, problems.joined(separator: "\n"))
    }

    /// A POST that a page of another site could have sent (no form, but `Origin` or
    /// `Sec-Fetch-Site` says so) is refused: only this dashboard's pages and non-browser clients act.
    private func crossSite(_ request: Request) -> Response? {
        if let site = request.headers[.secFetchSite], site == "cross-site" || site == "same-site" {
            return Self.error(.forbidden, "an action from another site is refused")
        }
        if let origin = request.headers[.origin], let host = request.head.authority ?? request.headers[.host],
            URL(string: origin)?.host.map({ originHost in
                let port = URL(string: origin)?.port.map { ":\($0)" } ?? ""
                return originHost + port == host || "[\(originHost)]" + port == host
            }) != true
        {
            return Self.error(.forbidden, "an action from another origin (\(origin)) is refused")
        }
        return nil
    }

    /// Where a form post goes back to: a same-origin path (beginning with one `/`), else `/`,
    /// with the id of what the action said in `?notice=`.
    static func returnPath(_ path: String?, notice: String) -> String {
        var target = "/"
        if let path, path.hasPrefix("/"), !path.hasPrefix("//"), !path.contains("\\"),
            !path.contains(where: { $0.isNewline || $0 == "\0" })
        {
            target = path
        }
        return target + (target.contains("?") ? "&" : "?") + "notice=" + notice
    }
}

extension HTTPField.Name {
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
    static let host = HTTPField.Name("Host")!
}
