/// Parses and prints the durations of job files: `500ms`, `30s`, `15m`, `2h`, `1h30m`, `1d`,
/// or a bare number of seconds.
public enum JobDuration {
    /// Parses a duration, or returns nil when the text is not one.
    public static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingSpaces()
        guard !trimmed.isEmpty else { return nil }
        if let seconds = Double(trimmed) {
            guard seconds.isFinite, seconds >= 0, seconds < 1e12 else { return nil }
            return .milliseconds(Int64((seconds * 1000).rounded()))
        }
        var total: Int64 = 0
        var digits = ""
        var index = trimmed.startIndex
        var sawUnit = false
        while index < trimmed.endIndex {
            let character = trimmed[index]
            if character.isASCII, character.isNumber {
                digits.append(character)
                index = trimmed.index(after: index)
                continue
            }
            guard let value = Int64(digits), digits.count <= 12 else { return nil }
            var unitEnd = index
            while unitEnd < trimmed.endIndex, trimmed[unitEnd].isLetter {
                unitEnd = trimmed.index(after: unitEnd)
            }
            let unit = trimmed[index..<unitEnd]
            let millis: Int64
            switch unit {
            case "ms": millis = 1
            case "s": millis = 1000
            case "m": millis = 60_000
            case "h": millis = 3_600_000
            case "d": millis = 86_400_000
            default: return nil
            }
            let (product, overflow) = value.multipliedReportingOverflow(by: millis)
            guard !overflow else { return nil }
            total += product
            digits = ""
            sawUnit = true
            index = unitEnd
        }
        guard digits.isEmpty, sawUnit else { return nil }
        return .milliseconds(total)
    }

    /// Prints a duration the way a job file would write it (`1m30s`, `250ms`).
    public static func format(_ duration: Duration) -> String {
        var millis = duration.milliseconds
        if millis == 0 { return "0s" }
        var parts = ""
        for (unit, size) in [("d", Int64(86_400_000)), ("h", 3_600_000), ("m", 60_000)] where millis >= size {
            parts += "\(millis / size)\(unit)"
            millis %= size
        }
        // Seconds with their fraction, `1.024s`, rather than `1s24ms`; below a second alone, `500ms`.
        let (whole, fraction) = (millis / 1000, millis % 1000)
        if fraction == 0 {
            if whole > 0 { parts += "\(whole)s" }
        } else if whole == 0 && parts.isEmpty {
            parts += "\(fraction)ms"
        } else {
            var digits = String(fraction)
            digits = String(repeating: "0", count: 3 - digits.count) + digits
            while digits.hasSuffix("0") { digits.removeLast() }
            parts += "\(whole).\(digits)s"
        }
        return parts
    }
}

extension Duration {
    /// Whole milliseconds, rounded toward zero.
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// The duration in seconds as a floating-point number.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
