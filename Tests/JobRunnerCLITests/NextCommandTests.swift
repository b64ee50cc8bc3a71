import Foundation
import Testing

/// `jobrunner next`, run as a user runs it: the built binary on a job directory.
@Suite struct NextCommandTests {
    static let jobs = """
        jobs:
          nightly:
            run: ./backup.sh
            cron: "30 2 * * *"
            timezone: America/New_York
          refresh:
            run: ./refresh.sh
            every: 15m
          hourly:
            run: ./tick.sh
            cron: "@hourly"
            enabled: false
          build:
            run: make
        """

    /// Local time is Berlin's, whatever the machine's: `TZ` decides it.
    static let berlin = ["TZ": "Europe/Berlin"]

    @Test func listsEachPeriodicJobsDatesInItsZoneAndLocalTime() async throws {
        let workspace = try Workspace(files: ["periodic.yaml": Self.jobs])
        // New York's clocks jump from 02:00 to 03:00 on 2026-03-08: 02:30 fires at 03:00.
        let next = try await workspace.run(
            ["next", "jobs", "--count", "3", "--from", "2026-03-07T12:00:00Z"], environment: Self.berlin)
        #expect(next.status == 0, "\(next.stderr)")
        #expect(next.stderr.isEmpty)
        #expect(
            next.stdout == """
                next 3 fire dates after 2026-03-07 13:00:00 +01:00, local time Europe/Berlin

                nightly: cron '30 2 * * *' in America/New_York
                  2026-03-08 03:00:00 -04:00  =  2026-03-08 08:00:00 +01:00 local
                  2026-03-09 02:30:00 -04:00  =  2026-03-09 07:30:00 +01:00 local
                  2026-03-10 02:30:00 -04:00  =  2026-03-10 07:30:00 +01:00 local

                refresh: every 15m, counted from 2026-03-07 13:00:00 +01:00 (a runner counts from when it first sees the job, and runs it at once then)
                  2026-03-07 13:15:00 +01:00 local
                  2026-03-07 13:30:00 +01:00 local
                  2026-03-07 13:45:00 +01:00 local

                hourly: cron '@hourly' in Europe/Berlin (enabled: false, so never started)
                  2026-03-07 14:00:00 +01:00  =  2026-03-07 14:00:00 +01:00 local
                  2026-03-07 15:00:00 +01:00  =  2026-03-07 15:00:00 +01:00 local
                  2026-03-07 16:00:00 +01:00  =  2026-03-07 16:00:00 +01:00 local

                """)
    }

    /// `EST` is a fixed UTC-5 all year: its dates are shown in that zone, not New York's summer
    /// time; `UTC` is shown as the file names it.
    @Test func datesAreShownInTheZoneTheyAreComputedIn() async throws {
        let workspace = try Workspace(files: [
            "a.yaml":
                "jobs:\n  e:\n    run: x\n    cron: '@daily'\n    timezone: EST\n  u:\n    run: x\n    cron: '@daily'\n    timezone: UTC\n"
        ])
        let next = try await workspace.run(
            ["next", "jobs", "--count", "1", "--from", "2026-06-01T12:00:00Z"], environment: ["TZ": "UTC"])
        #expect(next.status == 0, "\(next)")
        #expect(
            next.stdout.contains(
                "e: cron '@daily' in EST\n  2026-06-02 00:00:00 -05:00  =  2026-06-02 05:00:00 +00:00 local"),
            "\(next.stdout)")
        #expect(
            next.stdout.contains("u: cron '@daily' in UTC\n  2026-06-02 00:00:00 +00:00"), "\(next.stdout)")
    }

    @Test func countsFromNowByDefaultAndShowsFiveDates() async throws {
        let workspace = try Workspace(files: ["periodic.yaml": Self.jobs])
        let next = try await workspace.run(["next", "jobs"], environment: Self.berlin)
        #expect(next.status == 0, "\(next.stderr)")
        let lines = next.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "next 5 fire dates after now, local time Europe/Berlin")
        #expect(lines.contains { $0.hasPrefix("refresh: every 15m, counted from now (") })
        #expect(lines.filter { $0.hasSuffix(" local") }.count == 15)
        #expect(!next.stdout.contains("build"), "one-shot jobs are not listed")
    }

    @Test func saysSoWhenNoJobIsPeriodic() async throws {
        let workspace = try Workspace(files: ["ci.yaml": "jobs:\n  build:\n    run: make\n"])
        let next = try await workspace.run("next", "jobs")
        #expect(next.status == 0)
        #expect(next.stdout == "no periodic jobs in 1 file: none has every: or cron:\n")
    }

    @Test func aWrongCronIsALocatedErrorAndExitTwo() async throws {
        let workspace = try Workspace(files: ["bad.yaml": "jobs:\n  a:\n    run: x\n    cron: '0 25 * * *'\n"]
        )
        let next = try await workspace.run("next", "jobs")
        #expect(next.status == 2)
        #expect(
            next.stderr.contains("jobs/bad.yaml:4:11: error: cron field 2 (hour) '25' is out of range 0-23"))
        #expect(next.stdout.isEmpty)
    }

    @Test(arguments: [["--count", "0"], ["--from", "yesterday"]])
    func refusesBadOptions(options: [String]) async throws {
        let workspace = try Workspace(files: ["periodic.yaml": Self.jobs])
        let next = try await workspace.run(["next", "jobs"] + options, environment: [:])
        #expect(next.status == 2)
        #expect(next.stderr.contains(options[0]))
    }
}
