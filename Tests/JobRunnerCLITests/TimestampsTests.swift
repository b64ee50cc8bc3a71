import Foundation
import JobRunnerCore
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

    /// Dates written in a row, many in one second, some before 1970, read as `iso` writes each.
    @Test func isoWriterWritesWhatIsoWrites() {
        var dates: [Date] = []
        for base in [-86_401.25, -1.5, 0, 1_800_000_000.1234] {
            for step in 0..<2_500 { dates.append(Date(timeIntervalSince1970: base + Double(step) * 0.000_7)) }
        }
        dates += dates.reversed()
        var writer = Timestamps.ISOWriter()
        for date in dates {
            var bytes: [UInt8] = []
            writer.append(date, to: &bytes)
            #expect(
                String(decoding: bytes, as: UTF8.self) == Timestamps.iso(date),
                "\(date.timeIntervalSince1970)")
        }
    }

    /// The calendar arithmetic `iso` uses agrees with gmtime_r, before 1970 and on leap days too.
    @Test func civilTimeAgreesWithGmtime() {
        var moments = [0, -1, -86_400, -86_401, 951_782_400, 951_868_799, 4_102_444_799, -2_208_988_800]
        for step in -2_000..<6_000 { moments.append(step * 1_234_567 + step % 7) }
        for moment in moments {
            var seconds = time_t(moment)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            let civil = CivilTime(secondsSince1970: moment)
            let expected = [
                Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                Int(parts.tm_hour) * 3600 + Int(parts.tm_min) * 60 + Int(parts.tm_sec),
            ]
            #expect([civil.year, civil.month, civil.day, civil.secondOfDay] == expected, "\(moment)")
        }
    }
}
