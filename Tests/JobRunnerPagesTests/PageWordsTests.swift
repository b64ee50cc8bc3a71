import Foundation
import JobRunnerCore
import JobRunnerPages
import Testing

/// What the pages say, and how: a page number beyond the last, the command line's backticks set
/// as code, a report's dates in full.
@Suite("The pages' words")
struct PageWordsTests {
    @Test("a page beyond the last shows the last one and says so")
    func beyondTheLastPage() async throws {
        let fixture = try PageFixture()
        for index in 0..<60 {
            try await fixture.addRun(
                "tick-\(1000 + index)", state: .succeeded, jobs: [JobSpec(id: "tick", state: .succeeded)],
                age: Double(10_000 - index), occurrenceOf: "tick")
        }
        let page = try await Pages.runs(
            fixture.model, job: nil, state: nil, page: 999, settings: PageFixture.settings())
        #expect(page.contains("There is no page 999: the history has 2 pages; this is the last."))
        #expect(page.contains("60 runs; page 2 of 2"))
        #expect(page.contains("href=\"/runs/tick-1000\""))
        #expect(page.contains("← newer"))
    }

    @Test("words of the command line show their backticks as code")
    func backticksAreCode() async throws {
        let fixture = try PageFixture()
        let empty = try await Pages.home(fixture.model, settings: PageFixture.settings())
        #expect(empty.contains("<code>jobrunner run</code>"))
        #expect(!empty.contains("`"), "\(empty)")
        var settings = PageFixture.settings()
        settings.message = "stored: the next `jobrunner serve` starts <tick>"
        let told = try await Pages.home(fixture.model, settings: settings)
        #expect(told.contains("stored: the next <code>jobrunner serve</code> starts &lt;tick&gt;"))
    }

    @Test("a report shows dates in full, nothing relative to when it was written")
    func reportDates() async throws {
        let fixture = try PageFixture()
        try await fixture.addRun(
            "r", state: .failed,
            jobs: [JobSpec(id: "a", state: .failed, reason: .ended(.exit(1)), attempts: [.failed])], age: 55)
        let page = try #require(try await Pages.report(fixture.model, runID: "r", now: PageFixture.now))
        #expect(!page.contains(" ago"), "\(page)")
        let served = try #require(
            try await Pages.run(fixture.model, runID: "r", settings: PageFixture.settings()))
        #expect(served.contains("55 s ago"))
        // The year of the run's start, in full, as `<time>`'s text.
        var seconds = time_t(PageFixture.now.addingTimeInterval(-55).timeIntervalSince1970)
        var parts = tm()
        localtime_r(&seconds, &parts)
        #expect(page.contains("\">\(parts.tm_year + 1900)-"))
    }
}

/// "2 attempts of 1" after an operator's retry of a job without retries.
@Suite("Attempt counts in words")
struct AttemptWordsTests {
    @Test("attempts that did not count are told apart")
    func uncounted() {
        var record = JobRecord(
            jobID: "build", pipeline: "default", needs: [], maxAttempts: 1, state: .failed, attempts: 2)
        record.uncountedAttempts = 1
        #expect(record.attemptsWords == "2 attempts, 1 of 1 counted")
        record.uncountedAttempts = 0
        record.maxAttempts = 3
        #expect(record.attemptsWords == "2 attempts of 3")
        #expect(record.nextAttemptWords == "attempt 3 of 3")
        record.uncountedAttempts = 1
        #expect(record.nextAttemptWords == "attempt 3, 2 of 3 counted")
        record.maxAttempts = nil
        #expect(record.attemptsWords == "2 attempts")
    }
}
