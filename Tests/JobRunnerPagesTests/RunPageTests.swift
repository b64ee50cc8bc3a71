import Foundation
import JobRunnerCore
import JobRunnerPages
import Testing

@Suite("The run page")
struct RunPageTests {
    let hostileJob = "x<img src=x onerror=alert(1)>"
    let hostileOutput = "<script>alert('owned')</script>"

    func sampleRun(_ fixture: PageFixture) async throws {
        try await fixture.addRun(
            "run-1", state: .failed,
            jobs: [
                JobSpec(
                    id: "fetch", state: .succeeded, attempts: [.succeeded], outputs: ["token": hostileOutput]),
                JobSpec(
                    id: "build", state: .failed, needs: ["fetch"], reason: .ended(.exit(2)),
                    attempts: [.failed, .failed]),
                JobSpec(id: "test", state: .blocked, needs: ["build"], reason: .ended(.blockedBy("build"))),
                JobSpec(id: hostileJob, state: .running, needs: ["fetch"], attempts: [nil]),
            ])
    }

    @Test("shows each job's state, reason and attempts in status's words")
    func facts() async throws {
        let fixture = try PageFixture()
        try await sampleRun(fixture)
        let page = try #require(
            try await Pages.run(fixture.model, runID: "run-1", settings: PageFixture.settings()))
        #expect(page.hasPrefix("<!DOCTYPE html>"))
        #expect(page.contains("exit:2 (2 attempts)"))
        #expect(page.contains("needs:build"))
        #expect(page.contains("2 attempts of 3"))
        #expect(page.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"graph\""))
        #expect(page.contains("class=\"node s-failed\""))
        #expect(page.contains("class=\"node s-blocked\""))
        #expect(page.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\""))
        #expect(page.contains("build attempt 2: failed, 10.0s"))
        #expect(page.contains("href=\"/runs/run-1/jobs/build/attempts/2\""))
    }

    @Test("escapes job ids and outputs: an output <script> shows as text")
    func escaping() async throws {
        let fixture = try PageFixture()
        try await sampleRun(fixture)
        let page = try #require(
            try await Pages.run(fixture.model, runID: "run-1", settings: PageFixture.settings()))
        #expect(!page.contains(hostileOutput))
        #expect(page.contains("&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt;"))
        #expect(!page.contains("<img"))
        #expect(page.contains("x&lt;img src=x onerror=alert(1)&gt;"))
        // One script element: the page's own, by address.
        #expect(page.occurrences(of: "<script") == 1)
        #expect(page.contains("<script src=\"/assets/app.js\" defer></script>"))
        // The hostile id's address is percent-encoded.
        #expect(page.contains("/runs/run-1/jobs/x%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E/cancel"))
    }

    @Test("every form posts with the CSRF token and the page to return to")
    func forms() async throws {
        let fixture = try PageFixture()
        try await sampleRun(fixture)
        let page = try #require(
            try await Pages.run(fixture.model, runID: "run-1", settings: PageFixture.settings()))
        let forms = page.occurrences(of: "<form ")
        #expect(forms > 0)
        #expect(page.occurrences(of: "<form method=\"post\"") == forms)
        #expect(page.occurrences(of: "name=\"csrf\" value=\"tok-123\"") == forms)
        #expect(page.occurrences(of: "name=\"return\" value=\"/runs/run-1\"") == forms)
        #expect(page.contains("action=\"/api/v1/runs/run-1/jobs/build/retry\""))
        #expect(!page.contains("action=\"/api/v1/runs/run-1/jobs/fetch/retry\""))
        #expect(page.contains("action=\"/api/v1/runs/run-1/jobs/test/retry\""))
    }

    @Test("a read-only page has no forms, and one without live updates no script")
    func readOnly() async throws {
        let fixture = try PageFixture()
        try await sampleRun(fixture)
        let settings = PageFixture.settings(readOnly: true, live: false)
        let page = try #require(try await Pages.run(fixture.model, runID: "run-1", settings: settings))
        #expect(!page.contains("<form"))
        #expect(!page.contains("<button"))
        #expect(!page.contains("<script"))
        #expect(page.contains("read-only"))
    }

    @Test("an unknown run is nil (404)")
    func unknown() async throws {
        let fixture = try PageFixture()
        try await sampleRun(fixture)
        #expect(try await Pages.run(fixture.model, runID: "nope", settings: PageFixture.settings()) == nil)
        #expect(try await Pages.report(fixture.model, runID: "nope", now: PageFixture.now) == nil)
    }

    @Test("a notice from the server's ?message= is shown, escaped")
    func message() async throws {
        let fixture = try PageFixture()
        try await sampleRun(fixture)
        var settings = PageFixture.settings()
        settings.message = "build gets <another> chance"
        let page = try #require(try await Pages.run(fixture.model, runID: "run-1", settings: settings))
        #expect(page.contains("<p class=\"notice\" role=\"status\">build gets &lt;another&gt; chance</p>"))
    }

    /// The run page and the report showed "the next `jobrunner run` resumes it" with its
    /// backticks.
    @Test("code in the run's first line is shown as code, on the page and in the report")
    func runnerLineCode() async throws {
        let fixture = try PageFixture()
        try await fixture.addRun(
            "open", state: .running, jobs: [JobSpec(id: "a", state: .pending)])
        let page = try #require(
            try await Pages.run(fixture.model, runID: "open", settings: PageFixture.settings()))
        let report = try #require(try await Pages.report(fixture.model, runID: "open", now: PageFixture.now))
        for document in [page, report] {
            #expect(
                document.contains("no runner: the next <code>jobrunner run</code> resumes it"), "\(document)")
        }
    }

    /// A long job name cut in the timeline lost its attempt number; the timeline had no legend
    /// (a retried attempt was brown, unexplained); the report's Log column said "log" with no link.
    @Test("the timeline keeps attempt numbers and has a legend; the report has no dead log column")
    func timelineLabelsAndLegend() async throws {
        let fixture = try PageFixture()
        let long = "a-very-long-job-name-that-goes-on-and-on"
        try await fixture.addRun(
            "long", state: .failed,
            jobs: [JobSpec(id: long, state: .failed, reason: .ended(.exit(2)), attempts: [.failed, .failed])])
        let page = try #require(
            try await Pages.run(fixture.model, runID: "long", settings: PageFixture.settings()))
        #expect(page.contains("… #2</text>"), "\(page)")
        #expect(page.contains("… #1</text>"), "\(page)")
        #expect(page.contains("<ul class=\"legend\" aria-label=\"Attempt outcomes\">"))
        #expect(
            page.contains("<span class=\"swatch s-tempfail\"></span>temporary failure (exit 75), retried"))
        let report = try #require(try await Pages.report(fixture.model, runID: "long", now: PageFixture.now))
        #expect(!report.contains("<th>Log</th>"), "\(report)")
        #expect(!report.contains(">log<"), "\(report)")
        #expect(page.contains("<th>Log</th>"))
    }

    /// A two-line message lost its line break; a refusal looked like a success.
    @Test("a notice shows each line, code in backticks, and a refusal as an error")
    func errorNotice() async throws {
        let fixture = try PageFixture()
        try await sampleRun(fixture)
        var settings = PageFixture.settings()
        settings.message = "cannot retry build: build is running\nthe next `jobrunner run` resumes it"
        settings.messageIsError = true
        let page = try #require(try await Pages.run(fixture.model, runID: "run-1", settings: settings))
        #expect(
            page.contains(
                "<p class=\"notice error\" role=\"alert\">cannot retry build: build is running<br>the next <code>jobrunner run</code> resumes it</p>"
            ), "\(page)")
    }

    @Test("the report is self-contained: CSS inline, no script, no forms, no links to the server")
    func report() async throws {
        let fixture = try PageFixture()
        try await sampleRun(fixture)
        try fixture.writeLog(
            run: "run-1", job: "build", attempt: 2,
            Array("compiling\n<b>error</b>: \u{1B}[31mbroken\u{1B}[0m\n".utf8))
        let page = try #require(try await Pages.report(fixture.model, runID: "run-1", now: PageFixture.now))
        #expect(page.contains("<style>"))
        #expect(!page.contains("<script"))
        #expect(!page.contains("<link"))
        #expect(!page.contains("<form"))
        #expect(!page.contains("href=\"/"))
        #expect(!page.contains("src=\""))
        #expect(page.contains("&lt;b&gt;error&lt;/b&gt;: <span class=\"fg-1\">broken</span>"))
        #expect(page.contains("exit:2 (2 attempts)"))
    }

    @Test("a run of more than 200 jobs lists those that did not succeed and draws their neighbourhood")
    func bigRun() async throws {
        let fixture = try PageFixture()
        var jobs = (0..<500).map {
            JobSpec(id: "j\($0)", state: .succeeded, needs: $0 == 0 ? [] : ["j\($0 - 1)"])
        }
        jobs[250].state = .failed
        jobs[250].reason = .ended(.exit(1))
        jobs[251].state = .blocked
        try await fixture.addRun("big", state: .failed, jobs: jobs)
        let page = try #require(
            try await Pages.run(fixture.model, runID: "big", settings: PageFixture.settings()))
        #expect(page.contains("498 succeeded jobs are not listed"))
        #expect(page.contains("id=\"job-j250\""))
        #expect(!page.contains("id=\"job-j10\""))
        #expect(
            page.contains("the graph shows the 2 that did not succeed and the jobs next to them (4 in all)"))
        #expect(page.occurrences(of: "<g class=\"node ") == 4)
    }

    @Test("a run too big even for its neighbourhood is drawn by pipeline, and says so")
    func pipelines() async throws {
        let fixture = try PageFixture()
        let jobs = (0..<400).map {
            JobSpec(
                id: "j\($0)", state: $0 % 4 == 0 ? .succeeded : .failed, pipeline: $0 < 200 ? "build" : "test"
            )
        }
        try await fixture.addRun("wide", state: .failed, jobs: jobs)
        let page = try #require(
            try await Pages.run(fixture.model, runID: "wide", settings: PageFixture.settings()))
        #expect(
            page.contains("the graph shows its 2 pipelines, each coloured by the worst state of its jobs"))
        #expect(page.occurrences(of: "<g class=\"node s-failed\">") == 2)
    }
}
