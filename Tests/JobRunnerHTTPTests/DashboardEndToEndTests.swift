import Foundation
import Testing

/// The dashboard of the real binary, over plain sockets, as a browser or a script meets it.
@Suite(.serialized) struct DashboardEndToEndTests {
    static let jobs = """
        version: 1
        pipelines:
          main: { maxConcurrent: 2 }
        defaults: { pipeline: main }
        jobs:
          hello:
            run: |
              echo line one
              echo line two
              echo "note=<script>alert(1)</script>" >> "$JOBRUNNER_OUTPUT"
          broken:
            run: exit 3
          after:
            needs: [broken]
            run: echo after
        """

    /// A state directory with a finished run: `hello` succeeded, `broken` failed, `after` blocked.
    static func ranPlace() async throws -> Place {
        let place = try Place(files: ["main.yaml": jobs])
        let result = try await place.run(["run", place.jobs, "--progress", "none"])
        #expect(result.status == 1, "\(result.stderr)")
        return place
    }

    static func runID(_ port: Int, headers: [String: String] = [:]) async throws -> String {
        let status = try await request(port, "GET", "/api/v1/status", headers: headers)
        let object = try JSONSerialization.jsonObject(with: Data(status.body.utf8)) as? [String: Any]
        let run = object?["run"] as? [String: Any]
        return try #require(run?["id"] as? String)
    }

    @Test func aNonLoopbackAddressWithoutATokenIsRefused() async throws {
        let place = try Place(files: ["main.yaml": Self.jobs])
        let result = try await place.run(["web", "--http", "0.0.0.0:0"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--http-token-file"), "\(result.stderr)")
    }

    /// A port in use was found only once the runner had started its jobs: the run then ended
    /// with exit 3 and a sentence about a full disk, and the next run found its attempt
    /// interrupted. It is refused before anything starts.
    @Test func aPortInUseIsRefusedBeforeAnyJobStarts() async throws {
        let place = try await Self.ranPlace()
        let server = try await place.web()
        defer { Task { await server.stop() } }
        let fresh = try Place(files: ["main.yaml": Self.jobs])
        let result = try await fresh.run([
            "run", fresh.jobs, "--progress", "plain", "--http", "127.0.0.1:\(server.port)",
        ])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("cannot listen on 127.0.0.1:\(server.port)"), "\(result.stderr)")
        // Nothing ran, nothing was stored: no run in the state directory.
        #expect(!FileManager.default.fileExists(atPath: fresh.state + "/db/data.mdb"), "a run was opened")
    }

    /// An address of another machine with port 0 was not checked: the run started its jobs,
    /// then ended with exit 3, errno 99 and a sentence about a full disk.
    @Test func anAddressNotOnThisMachineIsRefusedBeforeAnyJobStarts() async throws {
        let place = try Place(files: ["main.yaml": Self.jobs, "token": "a-long-token"])
        let result = try await place.run([
            "run", place.jobs, "--progress", "plain", "--http", "10.99.99.99:0", "--http-token-file",
            place.jobs + "/token",
        ])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "cannot listen on 10.99.99.99:0: the address is not one of this machine's"),
            "\(result.stderr)")
        #expect(!result.stderr.contains("full"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: place.state + "/db/data.mdb"), "a run was opened")
    }

    /// The line that says where the dashboard listens came after the first job had started.
    @Test func theDashboardListensBeforeTheFirstJobStarts() async throws {
        let place = try Place(files: ["main.yaml": Self.jobs])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: jobrunnerBinary)
        process.arguments = ["run", place.jobs, "--progress", "plain", "--http", "0", "--state", place.state]
        process.currentDirectoryURL = URL(fileURLWithPath: place.root)
        var environment = ProcessInfo.processInfo.environment
        environment["JOBRUNNER_HTTP_TOKEN"] = nil
        process.environment = environment
        // One pipe for both: the order of the lines is the order they were written in.
        let both = Pipe()
        process.standardOutput = both
        process.standardError = both
        try process.run()
        let text = await Task.detached {
            String(decoding: both.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }.value
        await Task.detached { process.waitUntilExit() }.value
        let listening = try #require(text.range(of: "jobrunner: dashboard at http://127.0.0.1:"), "\(text)")
        let started = try #require(text.range(of: "started "), "\(text)")
        #expect(listening.lowerBound < started.lowerBound, "\(text)")
    }

    /// `web --state` of a directory that does not exist made one (its db and logs) and served it.
    @Test(arguments: [[], ["--http-read-only"]])
    func webRefusesAStateDirectoryThatDoesNotExist(more: [String]) async throws {
        let place = try Place(files: [:])
        let started = try place.start(["web", "--http", "0"] + more)
        // Its standard error to the end, or to the line that says it serves (then it is stopped).
        let stderr = await Task.detached { () -> String in
            let handle = started.stderr.fileHandleForReading
            var text = ""
            while !text.contains("dashboard at") {
                let data = handle.availableData
                if data.isEmpty { break }
                text += String(decoding: data, as: UTF8.self)
            }
            return text
        }.value
        if stderr.contains("dashboard at") { started.process.terminate() }
        await Task.detached { started.process.waitUntilExit() }.value
        #expect(started.process.terminationStatus == 1, "\(stderr)")
        #expect(stderr.contains("no state directory at \(place.state)"), "\(stderr)")
        #expect(!FileManager.default.fileExists(atPath: place.state), "web created the state directory")
    }

    @Test func withATokenEveryRequestNeedsIt() async throws {
        let place = try await Self.ranPlace()
        let server = try await place.web(environment: ["JOBRUNNER_HTTP_TOKEN": "s3cret-token"])
        defer { Task { await server.stop() } }
        for path in ["/api/v1/status", "/api/v1/runs", "/events", "/metrics", "/api/v1/openapi.json"] {
            let answer = try await request(server.port, "GET", path)
            #expect(answer.status == 401, "\(path)")
            #expect(answer.body.contains("\"error\""), "\(path)")
            let wrong = try await request(
                server.port, "GET", path, headers: ["Authorization": "Bearer s3cret-tokeX"])
            #expect(wrong.status == 401, "\(path)")
        }
        // A page sends the browser to the login form.
        #expect(try await request(server.port, "GET", "/").status == 302)
        let bearer = ["Authorization": "Bearer s3cret-token"]
        #expect(try await request(server.port, "GET", "/api/v1/status", headers: bearer).status == 200)
        #expect(try await request(server.port, "GET", "/metrics", headers: bearer).status == 200)
        // The login form sets the cookie that then lets requests through.
        let refused = try await request(
            server.port, "POST", "/login", headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: "token=wrong")
        #expect(refused.status == 401)
        let login = try await request(
            server.port, "POST", "/login", headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: "token=s3cret-token")
        #expect(login.status == 302)
        let cookie = try #require(login.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
        #expect(
            try await request(server.port, "GET", "/api/v1/status", headers: ["Cookie": cookie]).status == 200
        )
    }

    /// The login page had no stylesheet (the assets too needed the token): unstyled, and white
    /// in dark mode.
    @Test func theLoginPageIsStyledAndTheAssetsNeedNoToken() async throws {
        let place = try await Self.ranPlace()
        let server = try await place.web(environment: ["JOBRUNNER_HTTP_TOKEN": "s3cret-token"])
        defer { Task { await server.stop() } }
        let login = try await request(server.port, "GET", "/login")
        #expect(login.body.contains("<link rel=\"stylesheet\" href=\"/assets/app.css\">"), "\(login.body)")
        let css = try await request(server.port, "GET", "/assets/app.css")
        #expect(css.status == 200)
        #expect(css.body.contains("prefers-color-scheme:dark"))
        #expect(try await request(server.port, "GET", "/assets/app.js").status == 200)
        #expect(try await request(server.port, "GET", "/assets/nope.css").status == 404)
    }

    @Test func theAPIAnswersAsTheCommandsPrint() async throws {
        let place = try await Self.ranPlace()
        let server = try await place.web()
        defer { Task { await server.stop() } }
        let id = try await Self.runID(server.port)
        let status = try await request(server.port, "GET", "/api/v1/runs/\(id)")
        #expect(status.status == 200)
        #expect(status.headers["content-type"]?.hasPrefix("application/json") == true)
        #expect(status.headers["x-content-type-options"] == "nosniff")
        let document = try JSONSerialization.jsonObject(with: Data(status.body.utf8)) as? [String: Any]
        let jobs = try #require(document?["jobs"] as? [[String: Any]])
        #expect(Set(jobs.compactMap { $0["id"] as? String }) == ["hello", "broken", "after"])
        let runs = try await request(server.port, "GET", "/api/v1/runs?limit=5")
        let list = try JSONSerialization.jsonObject(with: Data(runs.body.utf8)) as? [[String: Any]]
        #expect(list?.first?["id"] as? String == id)
        #expect(try await request(server.port, "GET", "/api/v1/runs?limit=zero").status == 400)
        // Unknown run, job or attempt: 404 with a JSON error.
        for path in [
            "/api/v1/runs/nope", "/api/v1/runs/\(id)/jobs/nope/attempts/1/log",
            "/api/v1/runs/\(id)/jobs/hello/attempts/9/log", "/api/v1/nothing",
            // Ids the store cannot even look up (an empty key, one longer than a key may be).
            "/api/v1/status?run=", "/api/v1/runs/" + String(repeating: "x", count: 600),
        ] {
            let answer = try await request(server.port, "GET", path)
            #expect(answer.status == 404, "\(path)")
            let error = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
            #expect(error?["error"] is String, "\(path)")
        }
        let openapi = try await request(server.port, "GET", "/api/v1/openapi.json")
        let spec = try JSONSerialization.jsonObject(with: Data(openapi.body.utf8)) as? [String: Any]
        #expect((spec?["paths"] as? [String: Any])?["/api/v1/status"] != nil)
    }

    @Test func logsAreServedByRanges() async throws {
        let place = try await Self.ranPlace()
        let server = try await place.web()
        defer { Task { await server.stop() } }
        let id = try await Self.runID(server.port)
        let path = "/api/v1/runs/\(id)/jobs/hello/attempts/1/log"
        let whole = try await request(server.port, "GET", path)
        #expect(whole.status == 200)
        #expect(whole.body == "line one\nline two\n")
        let tail = try await request(server.port, "GET", path, headers: ["Range": "bytes=9-"])
        #expect(tail.status == 206)
        #expect(tail.body == "line two\n")
        #expect(tail.headers["content-range"] == "bytes 9-17/18")
        let middle = try await request(server.port, "GET", path, headers: ["Range": "bytes=5-7"])
        #expect(middle.body == "one")
        let past = try await request(server.port, "GET", path, headers: ["Range": "bytes=18-"])
        #expect(past.status == 416)
        #expect(past.headers["content-range"] == "bytes */18")
    }

    @Test func eachActionHasTheCommandsEffect() async throws {
        let place = try await Self.ranPlace()
        let server = try await place.web()
        defer { Task { await server.stop() } }
        let id = try await Self.runID(server.port)
        let retry = try await request(server.port, "POST", "/api/v1/runs/\(id)/jobs/broken/retry")
        #expect(retry.status == 200, "\(retry.body)")
        #expect(retry.body.contains("\"ok\": true"))
        let after = try await request(server.port, "GET", "/api/v1/runs/\(id)")
        #expect(!after.body.contains("\"state\":\"failed\""), "\(after.body)")
        let skip = try await request(server.port, "POST", "/api/v1/runs/\(id)/jobs/broken/skip")
        #expect(skip.status == 200, "\(skip.body)")
        #expect(
            try await request(server.port, "GET", "/api/v1/runs/\(id)").body.contains(
                "\"id\":\"broken\",\"pipeline\":\"main\",\"state\":\"skipped\""))
        let unknown = try await request(server.port, "POST", "/api/v1/runs/\(id)/jobs/nope/cancel")
        #expect(unknown.status == 404)
        #expect(unknown.body.contains("has no job 'nope'"))
        let suspend = try await request(server.port, "POST", "/api/v1/pipelines/main/suspend")
        #expect(suspend.body.contains("pipeline main suspended (count 1)"), "\(suspend.body)")
        let resume = try await request(server.port, "POST", "/api/v1/pipelines/main/resume")
        #expect(resume.body.contains("pipeline main resumed"))
        let again = try await request(server.port, "POST", "/api/v1/pipelines/main/resume")
        #expect(again.status == 409)
        // An action takes POST only; another method is told which (405 with Allow).
        let get = try await request(server.port, "GET", "/api/v1/pipelines/main/resume")
        #expect(get.status == 405)
        #expect(get.headers["allow"] == "POST")
        let put = try await request(server.port, "PUT", "/api/v1/status")
        #expect(put.status == 405)
        #expect(put.headers["allow"] == "GET, HEAD")
    }

    @Test func formsNeedTheCSRFTokenAndOtherSitesAreRefused() async throws {
        let place = try await Self.ranPlace()
        let server = try await place.web()
        defer { Task { await server.stop() } }
        let form = ["Content-Type": "application/x-www-form-urlencoded"]
        let without = try await request(
            server.port, "POST", "/api/v1/pipelines/main/suspend", headers: form, body: "return=%2F")
        #expect(without.status == 403)
        let stale = try await request(
            server.port, "POST", "/api/v1/pipelines/main/suspend", headers: form, body: "csrf=abc&return=%2F")
        #expect(stale.status == 403)
        let crossSite = try await request(
            server.port, "POST", "/api/v1/pipelines/main/suspend", headers: ["Origin": "http://evil.example"])
        #expect(crossSite.status == 403)
        // Nothing was suspended.
        let metrics = try await request(server.port, "GET", "/api/v1/status")
        #expect(!metrics.body.contains("\"suspended\":1"))
    }

    /// A refused action was shown like a success, and `?message=` showed any text from the
    /// address as the server's notice.
    @Test func aRefusedFormActionIsShownAsAnErrorAndAddressesCarryNoNoticeText() async throws {
        let place = try await Self.ranPlace()
        let server = try await place.web()
        defer { Task { await server.stop() } }
        let phishing = try await request(
            server.port, "GET", "/?message=Your%20session%20expired%3A%20call%20us")
        #expect(phishing.status == 200)
        #expect(!phishing.body.contains("Your session expired"), "\(phishing.body)")
        let home = try await request(server.port, "GET", "/")
        let marker = try #require(home.body.range(of: "name=\"csrf\" value=\""))
        let csrf = String(home.body[marker.upperBound...].prefix { $0 != "\"" })
        let refused = try await request(
            server.port, "POST", "/api/v1/pipelines/main/resume",
            headers: ["Content-Type": "application/x-www-form-urlencoded"], body: "csrf=\(csrf)&return=%2F")
        #expect(refused.status == 303)
        let location = try #require(refused.headers["location"])
        #expect(location.hasPrefix("/?notice="), "\(location)")
        let page = try await request(server.port, "GET", location)
        #expect(page.body.contains("<p class=\"notice error\" role=\"alert\">"), "\(page.body)")
        #expect(page.body.contains("main is not suspended"), "\(page.body)")
        // An id the server never gave shows nothing.
        let made = try await request(server.port, "GET", "/?notice=0123456789abcdef")
        #expect(!made.body.contains("class=\"notice"), "\(made.body)")
    }

    @Test func readOnlyRefusesEveryAction() async throws {
        let place = try await Self.ranPlace()
        let server = try await place.web(["--http-read-only"])
        defer { Task { await server.stop() } }
        let id = try await Self.runID(server.port)
        for path in [
            "/api/v1/runs/\(id)/jobs/broken/retry", "/api/v1/runs/\(id)/jobs/broken/skip",
            "/api/v1/runs/\(id)/jobs/broken/cancel", "/api/v1/pipelines/main/suspend",
            "/api/v1/pipelines/main/resume", "/api/v1/jobs/hello/trigger",
        ] {
            let answer = try await request(server.port, "POST", path)
            #expect(answer.status == 403, "\(path)")
            #expect(answer.body.contains("read-only"), "\(path)")
        }
        #expect(
            try await request(server.port, "GET", "/api/v1/runs/\(id)").body.contains("\"state\":\"failed\""))
    }

    @Test func pagesCarryTheContentSecurityPolicy() async throws {
        let place = try await Self.ranPlace()
        let server = try await place.web()
        defer { Task { await server.stop() } }
        let id = try await Self.runID(server.port)
        // The run page shows `hello`'s output `<script>alert(1)</script>`: as text.
        let runPage = try await request(server.port, "GET", "/runs/\(id)")
        #expect(runPage.status == 200)
        #expect(runPage.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "\(runPage.body)")
        for path in [
            "/", "/runs", "/runs/nope", "/runs/\(id)", "/runs/\(id)/jobs/hello/attempts/1", "/login",
        ] {
            let page = try await request(server.port, "GET", path)
            #expect(
                page.headers["content-security-policy"]
                    == "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
                "\(path)")
            #expect(page.headers["content-type"]?.hasPrefix("text/html") == true)
            #expect(!page.body.contains("<script>alert(1)</script>"), "\(path)")
        }
    }

    @Test func eventsResumeAfterLastEventID() async throws {
        let place = try await Self.ranPlace()
        let server = try await place.web()
        defer { Task { await server.stop() } }
        func ids(_ text: String) -> [UInt64] {
            text.split(separator: "\n").compactMap { $0.hasPrefix("id: ") ? UInt64($0.dropFirst(4)) : nil }
        }
        let first = try await readEvents(port: server.port, headers: ["Last-Event-ID": "0"]) {
            $0.contains("event: run-finished")
        }
        #expect(first.contains("text/event-stream"))
        #expect(first.contains("event: started"))
        let all = ids(first)
        #expect(all == all.sorted() && all.count >= 3, "\(all) \(first)")
        let resumed = try await readEvents(port: server.port, headers: ["Last-Event-ID": "\(all[1])"]) {
            $0.contains("event: run-finished")
        }
        // (A line cut by the chunked encoding is not counted: the ids seen, not all of them.)
        #expect(!ids(resumed).isEmpty && ids(resumed).allSatisfy { $0 > all[1] }, "\(resumed)")
        #expect(!resumed.contains("\nid: \(all[0])\n") && !resumed.contains("\nid: \(all[1])\n"))
        // An action made through the API comes on the stream of a client that follows from
        // the run's events on (live, or from the store if it joined after).
        let live = Task {
            try await readEvents(port: server.port, headers: ["Last-Event-ID": "\(all.last ?? 0)"]) {
                $0.contains("event: pipeline")
            }
        }
        _ = try await request(server.port, "POST", "/api/v1/pipelines/main/suspend")
        let text = try await live.value
        #expect(text.contains("\"pipeline\": \"main\""), "\(text)")
    }

    @Test func metricsNamesStartWithJobrunner() async throws {
        let place = try await Self.ranPlace()
        let server = try await place.web()
        defer { Task { await server.stop() } }
        _ = try await request(server.port, "POST", "/api/v1/pipelines/main/suspend")
        let metrics = try await request(server.port, "GET", "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.body.contains("jobrunner_runs{state=\"failed\"} 1"), "\(metrics.body)")
        #expect(metrics.body.contains("jobrunner_pipeline_suspended{pipeline=\"main\"} 1"))
        let names = metrics.body.split(separator: "\n").filter { !$0.hasPrefix("#") }.map {
            String($0.prefix { $0 != "{" && $0 != " " })
        }
        #expect(!names.isEmpty)
        #expect(names.allSatisfy { $0.hasPrefix("jobrunner_") }, "\(names)")
    }
}

/// `POST /api/v1/jobs/ID/trigger`: `jobrunner trigger` through the API.
@Suite struct TriggerRouteTests {
    /// A one-shot job's trigger answered 404 (the job exists: it is refused, 409); messages
    /// named the server's state directory.
    @Test func aTriggerWithNoRunnerIsStoredAOneShotJobIs409AndAnUnknownJobIs404() async throws {
        let place = try Place(files: [
            "main.yaml": """
            version: 1
            jobs:
              once:
                run: echo once
              tick:
                every: 1h
                run: echo tick
            """
        ])
        // The first run schedules `tick` (its first occurrence is due at once).
        let ran = try await place.run(["run", place.jobs, "--progress", "none"])
        #expect(ran.status == 0, "\(ran.stderr)")
        let server = try await place.web()
        defer { Task { await server.stop() } }
        let trigger = try await request(server.port, "POST", "/api/v1/jobs/tick/trigger")
        #expect(trigger.status == 200, "\(trigger.body)")
        #expect(trigger.body.contains("stored: no runner works on this state directory"), "\(trigger.body)")
        #expect(!trigger.body.contains(place.root), "\(trigger.body)")
        let oneShot = try await request(server.port, "POST", "/api/v1/jobs/once/trigger")
        #expect(oneShot.status == 409, "\(oneShot.body)")
        #expect(oneShot.body.contains("once is a one-shot job"), "\(oneShot.body)")
        let unknown = try await request(server.port, "POST", "/api/v1/jobs/tik/trigger")
        #expect(unknown.status == 404)
        #expect(unknown.body.contains("tick"), "a did-you-mean: \(unknown.body)")
        // An unknown run names no path of the server's, and lists the newest run first.
        let runs = try await request(server.port, "GET", "/api/v1/runs")
        let listed = try #require(
            try JSONSerialization.jsonObject(with: Data(runs.body.utf8)) as? [[String: Any]])
        let newest = try #require(listed.first?["id"] as? String)
        let noRun = try await request(server.port, "POST", "/api/v1/runs/nope/jobs/once/retry")
        #expect(noRun.status == 404, "\(noRun.body)")
        #expect(!noRun.body.contains(place.root), "\(noRun.body)")
        #expect(
            noRun.body.contains("no run 'nope' in this state directory; recent runs: \(newest)"),
            "\(noRun.body)")
    }
}
