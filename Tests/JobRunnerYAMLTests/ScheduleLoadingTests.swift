import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerYAML

/// `every:`, `cron:`, `timezone:`, `catchUp:` and `overlap:` as the loader reads them.
@Suite struct ScheduleLoadingTests {
    static let periodic = """
        defaults:
          catchUp: all
        jobs:
          refresh:
            run: ./refresh.sh
            every: 15m
            overlap: queue
          nightly:
            run: ./backup.sh
            cron: "30 2 * * mon-fri"
            timezone: America/New_York
            catchUp: none
          local:
            plugin: users.refresh
            cron: "@hourly"
          once:
            run: make
        """

    static func load(_ text: String) -> JobFileLoader.Result {
        JobFileLoader.load(texts: [("jobs.yaml", text)])
    }

    @Test func readsSchedulesAndTheirSettings() throws {
        let result = Self.load(Self.periodic)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let workload = try #require(result.workload)
        let refresh = try #require(workload.job("refresh"))
        #expect(refresh.schedule == .every(.seconds(900)))
        #expect(refresh.isPeriodic)
        #expect(refresh.overlap == .queue)
        #expect(refresh.catchUp == .all, "from the file's defaults")

        let nightly = try #require(workload.job("nightly"))
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        #expect(nightly.schedule == .cron(try CronExpression("30 2 * * mon-fri"), timeZone: newYork))
        #expect(nightly.catchUp == CatchUp.none)
        #expect(nightly.overlap == .skip)

        let local = try #require(workload.job("local"))
        #expect(local.schedule == .cron(try CronExpression("@hourly"), timeZone: .current))

        let once = try #require(workload.job("once"))
        #expect(!once.isPeriodic)
        #expect(once.schedule == nil)
    }

    @Test func cronErrorsStandAtTheValue() {
        let result = Self.load(
            """
            jobs:
              a:
                run: x
                cron: "0 25 * * *"
              b:
                run: x
                cron: 0 0 * jna *
            """)
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:4:11: error: cron field 2 (hour) '25' is out of range 0-23",
                "jobs.yaml:7:11: error: cron field 4 (month): unknown month name 'jna'; use jan-dec or 1-12",
            ])
    }

    @Test func bothEveryAndCronIsAnErrorAtCron() {
        let result = Self.load("jobs:\n  a:\n    run: x\n    every: 1h\n    cron: '@daily'\n")
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:5:5: error: job 'a' has both 'every' and 'cron'; keep one of them"
            ])
    }

    @Test func choicesListTheAllowedValues() {
        let result = Self.load(
            "jobs:\n  a:\n    run: x\n    every: 1h\n    catchUp: most\n    overlap: both\n")
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:5:14: error: catchUp must be one of none, latest, all, not 'most'",
                "jobs.yaml:6:14: error: overlap must be one of skip, queue, replace, not 'both'",
            ])
    }

    @Test func unknownTimeZoneIsAnError() {
        let result = Self.load("jobs:\n  a:\n    run: x\n    cron: '@daily'\n    timezone: Mars/Olympus\n")
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:5:15: error: timezone 'Mars/Olympus' is not a known IANA time zone name, like Europe/Berlin or UTC"
            ])
    }

    @Test func isolationOnAShellJobIsAWarning() {
        let result = Self.load(
            "defaults:\n  isolation: process\njobs:\n  a:\n    run: x\n    isolation: process\n  b:\n    run: y\n"
        )
        #expect(result.workload != nil, "warnings do not stop a load")
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:6:5: warning: isolation applies to plugin jobs only; job 'a' runs a command, which always runs in a process of its own, so it has no effect"
            ])
    }

    @Test func timeZoneNamesAreIANANamesWithSuggestions() {
        func messages(_ zone: String) -> [String] {
            Self.load("jobs:\n  a:\n    run: x\n    cron: '@daily'\n    timezone: \(zone)\n").diagnostics.map(
                \.description)
        }
        #expect(
            messages("europe/berlin") == [
                "jobs.yaml:5:15: error: timezone 'europe/berlin' is not a known IANA time zone name, like Europe/Berlin or UTC; did you mean 'Europe/Berlin'?"
            ])
        #expect(
            messages("GMT+2") == [
                "jobs.yaml:5:15: error: timezone 'GMT+2' is not a known IANA time zone name, like Europe/Berlin or UTC; for a fixed offset write Etc/GMT-2 (the sign is inverted in these names) or name a place"
            ])
        for zone in ["UTC", "Europe/Berlin", "America/New_York", "Etc/GMT-2"] {
            #expect(messages(zone) == [], "\(zone)")
        }
    }

    @Test func aZoneIsShownByTheNameGiven() throws {
        let job = try #require(
            Self.load("jobs:\n  a:\n    run: x\n    cron: '@daily'\n    timezone: UTC\n").workload?.job("a"))
        #expect(job.schedule?.description == "cron '@daily' in UTC")
    }

    @Test func aOneShotJobMayNotNeedAPeriodicOne() {
        let result = Self.load(
            "jobs:\n  tick:\n    run: x\n    every: 1m\n  build:\n    run: make\n    needs: [tick]\n"
                + "  report:\n    run: y\n    every: 1h\n    needs: [tick, build]\n")
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:7:13: error: job 'build' runs once per run and cannot need 'tick', a periodic job; only periodic jobs may need periodic jobs"
            ])
    }

    @Test func settingsWithoutEffectAreWarnings() {
        let result = Self.load(
            "jobs:\n  a:\n    run: x\n    every: 1m\n    timezone: UTC\n  b:\n    run: y\n    catchUp: all\n    overlap: queue\n"
        )
        #expect(result.workload != nil, "warnings do not stop a load")
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:5:5: warning: timezone applies to cron only; job 'a' has no cron, so it has no effect",
                "jobs.yaml:8:5: warning: catchUp applies to periodic jobs only; job 'b' has neither every nor cron, so it has no effect",
                "jobs.yaml:9:5: warning: overlap applies to periodic jobs only; job 'b' has neither every nor cron, so it has no effect",
            ])
    }
}
