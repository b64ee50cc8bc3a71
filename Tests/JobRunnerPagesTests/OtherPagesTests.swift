import Foundation
import JobRunnerCore
import JobRunnerPages
import Testing

@Suite("The overview, history, attempt and periodic job pages")
struct OtherPagesTests {
    @Test(
        "the overview shows runs under way, counts, pipelines with suspend, periodic jobs with trigger, failures"
    )
    func home() async throws {
        let fixture = try PageFixture()
        try await fixture.addRun(
            "old", state: .failed,
            jobs: [JobSpec(id: "a", state: .failed, reason: .ended(.exit(1)), attempts: [.failed])],
            age: 7200)
        try await fixture.addRun(
            "now", state: .running,
            jobs: [
                JobSpec(id: "a", state: .running, pipeline: "build", attempts: [nil]),
                JobSpec(id: "b", state: .waiting, pipeline: "build", reason: .waiting(.internet)),
                JobSpec(id: "c", state: .waiting, reason: .waiting(.constraint("auth<token>"))),
            ], limits: ["build": 2])
        _ = try await fixture.store.updatePipeline("build") { $0.suspended = 1 }
        var schedule = ScheduleRecord(jobID: "tick", anchor: PageFixture.now, schedule: "every 15m")
        schedule.lastResult = .succeeded
        schedule.nextDue = PageFixture.now.addingTimeInterval(300)
        try await fixture.commit([.putSchedule(schedule)])
        let page = try await Pages.home(fixture.model, settings: PageFixture.settings())
        #expect(page.contains("href=\"/runs/now\""))
        #expect(page.contains("1/2 running"))
        #expect(page.contains("suspended: 1"))
        #expect(page.contains("action=\"/api/v1/pipelines/build/suspend\""))
        #expect(page.contains("action=\"/api/v1/pipelines/build/resume\""))
        #expect(page.contains("action=\"/api/v1/jobs/tick/trigger\""))
        #expect(page.contains("every 15m"))
        #expect(page.contains("in 5 min"))
        #expect(page.contains("1 job waits for the internet (the probe says offline): b"))
        #expect(page.contains("Constraint auth&lt;token&gt; is not satisfied; waiting: c"))
        #expect(page.contains("href=\"/runs/old\""))
        #expect(page.contains("No runner is serving this state directory"))
        #expect(page.contains("<span class=\"n\">1</span> running"))
        let readOnly = try await Pages.home(fixture.model, settings: PageFixture.settings(readOnly: true))
        #expect(!readOnly.contains("<form"))
    }

    /// The overview said "No job waits for the internet." while a periodic occurrence did.
    @Test("the overview counts the waits of occurrences under way")
    func occurrenceWaits() async throws {
        let fixture = try PageFixture()
        try await fixture.addRun(
            "now", state: .running, jobs: [JobSpec(id: "a", state: .running, attempts: [nil])])
        try await fixture.addRun(
            "mirror@1", state: .running,
            jobs: [JobSpec(id: "mirror", state: .waiting, reason: .waiting(.internet))],
            occurrenceOf: "mirror")
        let page = try await Pages.home(fixture.model, settings: PageFixture.settings())
        #expect(page.contains("1 job waits for the internet (the probe says offline): mirror"), "\(page)")
        #expect(!page.contains("No job waits for the internet."))
    }

    /// `/runs?state=bogus` said "0 runs bogus"; `?job=nope` said nothing of there being no such
    /// job; a 404 page had no links; `/jobs/ID` of a one-shot job said there was no such job.
    @Test("unknown filters and addresses say so, with links to what there is")
    func unknownFiltersAndAddresses() async throws {
        let fixture = try PageFixture()
        try await fixture.addRun("main", state: .succeeded, jobs: [JobSpec(id: "greet", state: .succeeded)])
        let bogus = try await Pages.runs(
            fixture.model, job: nil, state: "bogus", page: 1, settings: PageFixture.settings())
        #expect(
            bogus.contains(
                "There is no run state &#39;bogus&#39;: the states are running, stopped, succeeded, failed, skipped, missed."
            ) || bogus.contains("There is no run state 'bogus': the states are running, stopped"), "\(bogus)")
        let nope = try await Pages.runs(
            fixture.model, job: "nope", state: nil, page: 1, settings: PageFixture.settings())
        #expect(nope.contains("There is no periodic job"), "\(nope)")
        let greet = await Pages.notFound(
            fixture.model, path: ["jobs", "greet"], settings: PageFixture.settings())
        #expect(greet.contains("greet is a one-shot job"), "\(greet)")
        #expect(greet.contains("href=\"/runs/main#job-greet\""), "\(greet)")
        let run = await Pages.notFound(
            fixture.model, path: ["runs", "gone"], settings: PageFixture.settings())
        #expect(run.contains("<a href=\"/runs\">Runs</a> lists those kept"), "\(run)")
        let other = await Pages.notFound(fixture.model, path: ["nowhere"], settings: PageFixture.settings())
        #expect(other.contains("<a href=\"/\">the overview</a>"), "\(other)")
    }

    @Test("the overview of an empty store says there are no runs")
    func emptyHome() async throws {
        let fixture = try PageFixture()
        let page = try await Pages.home(fixture.model, settings: PageFixture.settings())
        #expect(page.contains("No runs yet."))
    }

    @Test("the history filters by job and state, and pages")
    func history() async throws {
        let fixture = try PageFixture()
        for index in 0..<60 {
            try await fixture.addRun(
                "tick-\(1000 + index)", state: index % 3 == 0 ? .failed : .succeeded,
                jobs: [JobSpec(id: "tick", state: .succeeded)], age: Double(10_000 - index),
                occurrenceOf: "tick")
        }
        try await fixture.addRun(
            "main", state: .succeeded, jobs: [JobSpec(id: "build", state: .succeeded)], age: 1)
        let first = try await Pages.runs(
            fixture.model, job: nil, state: nil, page: 1, settings: PageFixture.settings())
        #expect(first.contains("61 runs; page 1 of 2"))
        #expect(first.contains("href=\"/runs/main\""))
        #expect(first.contains("href=\"/runs?page=2\""))
        let second = try await Pages.runs(
            fixture.model, job: nil, state: nil, page: 2, settings: PageFixture.settings())
        #expect(second.contains("href=\"/runs/tick-1000\""))
        #expect(!second.contains("href=\"/runs/main\""))
        let failed = try await Pages.runs(
            fixture.model, job: "tick", state: "failed", page: 1, settings: PageFixture.settings())
        #expect(failed.contains("20 runs of tick failed"))
        #expect(!failed.contains("badge s-succeeded"))
        let none = try await Pages.runs(
            fixture.model, job: "<nope>", state: nil, page: 1, settings: PageFixture.settings())
        #expect(none.contains("No run matches."))
        #expect(none.contains("0 runs of &lt;nope&gt;"))
        #expect(!none.contains("<form"))
    }

    @Test("an attempt's page shows its log with ANSI colours as spans, escaped, and a download")
    func attempt() async throws {
        let fixture = try PageFixture()
        try await fixture.addRun(
            "r", state: .failed,
            jobs: [JobSpec(id: "build", state: .failed, reason: .ended(.exit(2)), attempts: [.failed])])
        try fixture.writeLog(
            run: "r", job: "build", attempt: 1,
            Array("\u{1B}[1;32mok\u{1B}[0m <script>alert(1)</script>\n\u{1B}]0;title\u{07}bell\u{07}\n".utf8))
        let page = try #require(
            try await Pages.attempt(
                fixture.model, runID: "r", jobID: "build", attempt: 1, settings: PageFixture.settings()))
        #expect(
            page.contains("<span class=\"fg-2 b\">ok</span> &lt;script&gt;alert(1)&lt;/script&gt;\nbell␇"))
        #expect(page.contains("data-src=\"/api/v1/runs/r/jobs/build/attempts/1/log\""))
        #expect(page.contains("data-running=\"false\""))
        #expect(page.contains("href=\"/api/v1/runs/r/jobs/build/attempts/1/log\""))
        #expect(!page.contains("0;title"))
        #expect(
            try await Pages.attempt(
                fixture.model, runID: "r", jobID: "build", attempt: 2, settings: PageFixture.settings())
                == nil)
        #expect(
            try await Pages.attempt(
                fixture.model, runID: "r", jobID: "nope", attempt: 1, settings: PageFixture.settings()) == nil
        )
        #expect(
            try await Pages.attempt(
                fixture.model, runID: "nope", jobID: "build", attempt: 1, settings: PageFixture.settings())
                == nil)
    }

    @Test("a big log shows its tail first, says so, and links the whole download")
    func bigLog() async throws {
        let fixture = try PageFixture()
        try await fixture.addRun(
            "r", state: .running, jobs: [JobSpec(id: "noisy", state: .running, attempts: [nil])])
        var text = ""
        for line in 0..<40_000 { text += "line \(line) of the noisy job\n" }
        try fixture.writeLog(run: "r", job: "noisy", attempt: 1, Array(text.utf8))
        let page = try #require(
            try await Pages.attempt(
                fixture.model, runID: "r", jobID: "noisy", attempt: 1, settings: PageFixture.settings()))
        #expect(page.contains("line 39999 of the noisy job"))
        #expect(!page.contains(">line 0 of the noisy job"))
        #expect(page.contains("this shows its last 256.0 KiB"))
        #expect(page.contains("Download the whole log"))
        #expect(page.contains("data-offset=\"\(text.utf8.count)\""))
        #expect(page.contains("data-running=\"true\""))
    }

    @Test("a periodic job's page lists its occurrences, next date and trigger; an unknown id is nil")
    func periodic() async throws {
        let fixture = try PageFixture()
        var schedule = ScheduleRecord(
            jobID: "tick", anchor: PageFixture.now, schedule: "cron '*/5 * * * *' in UTC")
        schedule.nextDue = PageFixture.now.addingTimeInterval(120)
        schedule.queued = PageFixture.now.addingTimeInterval(60)
        try await fixture.commit([.putSchedule(schedule)])
        try await fixture.addRun(
            "t1", state: .succeeded, jobs: [JobSpec(id: "tick", state: .succeeded)], occurrenceOf: "tick")
        try await fixture.addRun("t2", state: .skipped, jobs: [], age: 300, occurrenceOf: "tick")
        let page = try #require(
            try await Pages.periodicJob(fixture.model, jobID: "tick", settings: PageFixture.settings()))
        #expect(page.contains("cron &#39;*/5 * * * *&#39; in UTC"))
        #expect(page.contains("href=\"/runs/t1\""))
        #expect(page.contains("the previous occurrence still ran (<code>overlap: skip</code>)"))
        #expect(!page.contains("<p><form"), "a form is no phrasing content")
        #expect(page.contains("Waiting to run"))
        #expect(page.contains("action=\"/api/v1/jobs/tick/trigger\""))
        #expect(
            try await Pages.periodicJob(fixture.model, jobID: "nope", settings: PageFixture.settings()) == nil
        )
        let skipped = try #require(
            try await Pages.run(fixture.model, runID: "t2", settings: PageFixture.settings()))
        #expect(skipped.contains("was skipped: it fell due while the last occurrence still ran"))
        // It never started: recorded, no start and no duration (it showed both as if it ran).
        #expect(skipped.contains("recorded "), "\(skipped)")
        #expect(!skipped.contains("started ") && !skipped.contains(" · took "), "\(skipped)")
        let row = try #require(
            page.components(separatedBy: "<tr>").first { $0.contains("href=\"/runs/t2\"") }, "\(page)")
        let cells = row.components(separatedBy: "<td")
        #expect(cells.count >= 6 && cells[4].hasPrefix(">-<") && cells[5].hasPrefix(">-<"), "\(row)")
    }

    @Test("assets are served by name with their types; others are nil")
    func assets() {
        #expect(Pages.asset(named: "app.css")?.contentType == "text/css; charset=utf-8")
        #expect(Pages.asset(named: "app.js")?.body.isEmpty == false)
        #expect(Pages.asset(named: "favicon.svg")?.contentType == "image/svg+xml")
        #expect(Pages.asset(named: "../etc/passwd") == nil)
    }
}
