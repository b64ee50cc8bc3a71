import Foundation

/// Values that test a JSON layer: text that needs escapes or is not ASCII, numbers at the
/// edges of their types, dates far and near.
enum JSONFixtures {
    static let awkward: [String] = [
        "", "plain", "quote \" and backslash \\", "slash / and </script>",
        "controls \u{0}\u{1}\u{8}\u{9}\u{A}\u{B}\u{C}\u{D}\u{1B}\u{1F} end", "\u{7F} delete",
        "é café", "e\u{301} decomposed", "🚀 rocket", "\u{2028}\u{2029} separators", "\u{FEFF} mark",
        "\u{10FFFF} last", "\u{FFFD} replacement", "tab\there", String(repeating: "long é \" ", count: 200),
    ]

    /// Numbers as dates are stored (seconds since the reference date), and some beyond.
    static let doubles: [Double] = [
        0, 1, -1, 0.5, -0.25, 781_234_567.123_456, 781_234_567, -978_307_200, 1e9 + 1.0 / 3,
        .leastNonzeroMagnitude, 1e-7, 1e15, 1e16, 1e17, 1.5e300, -1.5e300, 63_113_904_000, -63_114_076_800,
        Double(Int64.max), 0.1, 123_456_789.1,
    ]

    static let dates: [Date] = doubles.map { Date(timeIntervalSinceReferenceDate: $0) }

    /// `JSONValue.quote` as it was written before the writer: a line feed, carriage return and
    /// tab as `\n`, `\r`, `\t`, other control characters as `\u00xx`.
    static func earlierQuote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
