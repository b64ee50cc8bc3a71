import Foundation
import HTTPTypes
import Hummingbird
import JobRunnerCore
import NIOCore

/// Answers every request of the dashboard: access first, then the route.
struct DashboardResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let reader: ReadModel
    /// nil: read-only (every action is refused, 403).
    let `operator`: Operator?
    let settings: DashboardSettings
    let access: Access
    let metrics: DashboardMetrics
    let hub: EventHub
    let pages: (any PageRendering)?
    /// What form actions said, for the pages they return to.
    let notices = Notices()

    /// What every page carries (web-contract): no inline script or style, nothing framed.
    static let contentSecurityPolicy =
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'"

    func respond(to request: Request, context: Context) async throws -> Response {
        let path = Self.components(request.uri.path)
        if path == ["login"], access.token != nil {
            return try await login(request)
        }
        // The stylesheet, script and icon hold no data: the login page is styled with them.
        if path.first == "assets", request.method == .get || request.method == .head {
            return asset(path)
        }
        guard access.allows(request) else {
            if request.method == .get, path.first != "api", path.first != "events", path.first != "metrics" {
                return Response.redirect(to: "/login", type: .found)
            }
            return Self.error(
                .unauthorized,
                "this dashboard needs its token: send Authorization: Bearer TOKEN, or sign in at /login")
        }
        let allowed: [HTTPRequest.Method] =
            path == ["login"] ? [.get, .head, .post] : Self.isAction(path) ? [.post] : [.get, .head]
        guard allowed.contains(request.method) else {
            var response = Self.error(
                .methodNotAllowed,
                "\(request.method) is not served at \(request.uri.path): it takes \(allowed.map(\.rawValue).joined(separator: ", "))"
            )
            response.headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
            return response
        }
        do {
            switch path.first {
            case "api" where request.method == .post:
                return try await action(request, path: Array(path.dropFirst()))
            case "api": return try await api(request, path: Array(path.dropFirst()))
            case "events": return events(request)
            case "metrics": return await metricsResponse()
            case "assets": return asset(path)
            default: return try await page(request, path: path)
            }
        } catch let error as StoreError {
            return Self.error(.internalServerError, "the store could not be read: \(error)")
        }
    }

    /// Whether `path` is an action's (POST only).
    static func isAction(_ path: [String]) -> Bool {
        guard path.count >= 2, path[0] == "api", path[1] == "v1" else { return false }
        let rest = path.dropFirst(2)
        switch (rest.first, rest.count, rest.last) {
        case ("runs", 5, "retry"), ("runs", 5, "skip"), ("runs", 5, "cancel"): return path[4] == "jobs"
        case ("pipelines", 3, "suspend"), ("pipelines", 3, "resume"), ("jobs", 3, "trigger"): return true
        default: return false
        }
    }

    /// Whether `id` can name a run, job or pipeline at all (the store's keys have a length
    /// limit): one that cannot is unknown (404) without a look.
    static func usable(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 200
    }

    /// The path's parts, percent-decoded, without empty ones.
    static func components(_ path: String) -> [String] {
        path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
    }

    // MARK: Responses

    /// A JSON body.
    static func json(_ status: HTTPResponse.Status = .ok, _ body: some Sequence<UInt8>) -> Response {
        Response(
            status: status, headers: jsonHeaders, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The headers of every JSON answer.
    static let jsonHeaders: HTTPFields = [
        .contentType: "application/json; charset=utf-8", .xContentTypeOptions: "nosniff",
        .cacheControl: "no-store",
    ]

    /// `{"error": message}`.
    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        json(status, Array("{\"error\": \(JSONValue.quote(message))}\n".utf8))
    }

    /// An HTML document with the Content-Security-Policy of the pages.
    static func html(_ document: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [
                .contentType: "text/html; charset=utf-8", .contentSecurityPolicy: contentSecurityPolicy,
                .xContentTypeOptions: "nosniff", .cacheControl: "no-store",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: document)))
    }

    // MARK: Login

    private func login(_ request: Request) async throws -> Response {
        switch request.method {
        case .get: return Self.html(Access.loginPage(failed: false))
        case .post:
            var request = request
            let form = try await Self.form(&request)
            guard let token = access.token, Access.same(form["token"] ?? "", token) else {
                return Self.html(Access.loginPage(failed: true), status: .unauthorized)
            }
            var response = Response.redirect(to: "/", type: .found)
            response.setCookie(access.cookie)
            return response
        default: return Self.error(.methodNotAllowed, "/login takes GET and POST")
        }
    }

    /// A form-encoded body's fields (at most 64 KiB).
    static func form(_ request: inout Request) async throws -> [String: String] {
        let buffer = try await request.collectBody(upTo: 64 << 10)
        let text = String(buffer: buffer)
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }

    // MARK: Metrics, assets, pages

    private func metricsResponse() async -> Response {
        let text = await metrics.scrape(reader)
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
    }

    private func asset(_ path: [String]) -> Response {
        guard path.count == 2, let pages, let asset = pages.asset(named: path[1]) else {
            return Self.error(.notFound, "no asset '\(path.dropFirst().joined(separator: "/"))'")
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: asset.contentType, .cacheControl: "max-age=3600",
                .contentSecurityPolicy: Self.contentSecurityPolicy, .xContentTypeOptions: "nosniff",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: asset.body)))
    }

    private func page(_ request: Request, path: [String]) async throws -> Response {
        guard let pages else {
            return Self.html(
                "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>jobrunner</title></head>"
                    + "<body><main id=\"main\"><p>The pages are not part of this build; the JSON API is at "
                    + "<a href=\"/api/v1/status\">/api/v1/status</a>.</p></main></body></html>",
                status: .notFound)
        }
        var query: [String: String] = [:]
        for (key, value) in request.uri.queryParameters { query[String(key)] = String(value) }
        // A notice is only ever what an action here said: never text from the address.
        query["message"] = nil
        query["message-kind"] = nil
        if let notice = query["notice"].flatMap(notices.notice) {
            query["message"] = notice.text
            query["message-kind"] = notice.isError ? "error" : "ok"
        }
        guard
            let document = try await pages.page(
                path: path, query: query, reader: reader, csrfToken: `operator` == nil ? nil : access.csrf,
                readOnly: `operator` == nil)
        else {
            return Self.html(
                await pages.notFound(path: path, reader: reader, readOnly: `operator` == nil),
                status: .notFound)
        }
        return Self.html(document)
    }
}

extension HTTPField.Name {
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
    static let allow = HTTPField.Name("Allow")!
}
