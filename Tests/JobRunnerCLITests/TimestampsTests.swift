import Foundation
import Testing

@testable import JobRunnerCLI

@Suite struct TimestampsTests {
    /// The hand-made format agrees with Foundation's ISO 8601 style, milliseconds included.
    @Test func isoMatchesFoundationsISO8601() {
        var dates = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_795_000_000.999_9),
            Date(timeIntervalSince1970: 951_782_400.5),  // 2000-02-29
            Date(timeIntervalSince1970: 4_102_444_799.001),  // 2099-12-31T23:59:59
        ]
        for step in 0..<500 {
            // Spread over 1970-2095, with every kind of millisecond part.
            dates.append(Date(timeIntervalSince1970: Double(step) * 7_919_993.137_1))
        }
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        for date in dates {
            #expect(Timestamps.iso(date) == date.formatted(style), "\(date.timeIntervalSince1970)")
        }
    }
}
