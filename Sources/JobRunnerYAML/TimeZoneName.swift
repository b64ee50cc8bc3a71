import Foundation
import JobRunnerCore

/// `timezone:` values: names of the IANA time zone database, as this system knows them.
enum TimeZoneName {
    /// The zone named `name`, or the message for a name that is not one (with a "did you mean").
    /// An offset written as a name (`GMT+2`, `UTC-05:00`) is refused, though Foundation would
    /// take some of them: it is not an IANA name, and the IANA names for fixed offsets
    /// (`Etc/GMT-2`) have the opposite sign, which such a name leaves unclear.
    static func zone(named name: String) -> Result<TimeZone, Problem> {
        let start =
            "timezone \(VisibleText.quoted(name)) is not a known IANA time zone name, like Europe/Berlin or UTC"
        if let offset = offsetHint(name) {
            return .failure(Problem(message: "\(start); \(offset)"))
        }
        if let zone = TimeZone(identifier: name) { return .success(zone) }
        let lowered = name.lowercased()
        if let match = known.first(where: { $0.lowercased() == lowered }) {
            return .failure(Problem(message: "\(start); did you mean \(VisibleText.quoted(match))?"))
        }
        return .failure(Problem(message: start + Suggestion.hint(for: name, in: known)))
    }

    struct Problem: Error {
        var message: String
    }

    /// The names offered as suggestions: the system's list, which leaves out a few names it
    /// accepts (UTC among them).
    private static let known: [String] = TimeZone.knownTimeZoneIdentifiers + ["UTC", "Etc/UTC"]

    /// For `GMT+2`, `UTC-5` and the like: what to write instead; nil for any other name.
    private static func offsetHint(_ name: String) -> String? {
        let upper = name.uppercased()
        guard upper.hasPrefix("GMT") || upper.hasPrefix("UTC") else { return nil }
        let rest = upper.dropFirst(3)
        guard let sign = rest.first, sign == "+" || sign == "-" else { return nil }
        let digits = rest.dropFirst()
        if let hours = Int(digits), (0...14).contains(hours) {
            // Etc/GMT-2 is two hours ahead of UTC: the sign is POSIX's, the opposite of ISO's.
            return
                "for a fixed offset write Etc/GMT\(sign == "+" ? "-" : "+")\(hours) (the sign is inverted in these names) or name a place"
        }
        return
            "for a fixed offset write a name like Etc/GMT-2 (two hours ahead of UTC: the sign is inverted in these names) or name a place"
    }
}
