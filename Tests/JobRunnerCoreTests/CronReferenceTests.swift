import Foundation
import JobRunnerCore
import Testing

/// jobrunner's cron dates against a reference made with the PyPI library croniter by
/// `Fixtures/make_cron_fixture.py` (`make fixtures`): random expressions in time zones with and
/// without daylight saving, from a fixed date and from dates just before each change of 2026.
/// The script's docstring says where the reference follows crontab(5) and SPEC 5.8 rather
/// than croniter.
@Suite struct CronReferenceTests {
    struct Case: Decodable, CustomStringConvertible {
        var cron: String
        var timezone: String
        var start: String
        var next: [String]

        var description: String { "'\(cron)' in \(timezone) after \(start)" }
    }

    struct Reference: Decodable {
        var count: Int
        var cases: [Case]
    }

    static let reference: Reference? = {
        guard let url = Bundle.module.url(forResource: "Fixtures/cron-reference", withExtension: "json"),
            let data = try? Data(contentsOf: url)
        else { return nil }
        return try? JSONDecoder().decode(Reference.self, from: data)
    }()

    static func date(_ text: String) -> Date? {
        try? Date(text, strategy: .iso8601)
    }

    static func text(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    @Test func fixtureHoldsAtLeastAThousandCases() throws {
        let reference = try #require(Self.reference, "Fixtures/cron-reference.json is in the test bundle")
        #expect(reference.cases.count == reference.count)
        #expect(reference.cases.count >= 1000)
        let zones = Set(reference.cases.map(\.timezone))
        #expect(
            zones.isSuperset(of: ["Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata"]))
    }

    @Test func everyCaseGivesTheReferenceDates() throws {
        let reference = try #require(Self.reference)
        var failures: [String] = []
        for item in reference.cases {
            let expression = try CronExpression(item.cron)
            let zone = try #require(TimeZone(identifier: item.timezone), "\(item.timezone) is known")
            let start = try #require(Self.date(item.start))
            let dates = Schedule.cron(expression, timeZone: zone).nextFireDates(
                after: start, anchor: start, count: item.next.count)
            let got = dates.map(Self.text)
            if got != item.next {
                failures.append("\(item): expected \(item.next), got \(got)")
            }
        }
        #expect(
            failures.isEmpty,
            "\(failures.count) of \(reference.cases.count) differ:\n\(failures.prefix(20).joined(separator: "\n"))"
        )
    }
}
