import Foundation
import Testing

/// Where two values differ, field by field: each leaf compared exactly (a `Double` or a `Date`
/// by its bits, a `String` by its UTF-8, not by canonical equivalence), a dictionary by its keys,
/// an enum by its case and payload. An empty list: they are the same.
func fieldDifferences(_ expected: Any, _ actual: Any, at path: String = "") -> [String] {
    func differ(_ what: String) -> [String] { ["\(path.isEmpty ? "value" : path): \(what)"] }
    if let left = expected as? Date, let right = actual as? Date {
        let (a, b) = (left.timeIntervalSinceReferenceDate, right.timeIntervalSinceReferenceDate)
        return a.bitPattern == b.bitPattern ? [] : differ("\(a) ≠ \(b)")
    }
    if let a = expected as? Double, let b = actual as? Double {
        return a.bitPattern == b.bitPattern ? [] : differ("\(a) ≠ \(b)")
    }
    if let a = expected as? String, let b = actual as? String {
        return a.utf8.elementsEqual(b.utf8) ? [] : differ("\(a.debugDescription) ≠ \(b.debugDescription)")
    }
    let left = Mirror(reflecting: expected)
    let right = Mirror(reflecting: actual)
    // An optional against a value: the optional's value, if any.
    if (left.displayStyle == .optional) != (right.displayStyle == .optional) {
        let (optional, value, optionalFirst) =
            left.displayStyle == .optional ? (left, actual, true) : (right, expected, false)
        guard let wrapped = optional.children.first?.value else { return differ("\(expected) ≠ \(actual)") }
        return optionalFirst
            ? fieldDifferences(wrapped, value, at: path) : fieldDifferences(value, wrapped, at: path)
    }
    switch left.displayStyle {
    case .optional:
        switch (left.children.first, right.children.first) {
        case (nil, nil): return []
        case (let a?, let b?): return fieldDifferences(a.value, b.value, at: path)
        default: return differ("\(expected) ≠ \(actual)")
        }
    case .dictionary:
        func entries(_ mirror: Mirror) -> [String: Any] {
            var entries: [String: Any] = [:]
            for child in mirror.children {
                let pair = Array(Mirror(reflecting: child.value).children)
                entries[String(reflecting: pair[0].value)] = pair[1].value
            }
            return entries
        }
        let (a, b) = (entries(left), entries(right))
        guard Set(a.keys) == Set(b.keys) else {
            return differ("keys \(a.keys.sorted()) ≠ \(b.keys.sorted())")
        }
        return a.keys.sorted().flatMap { fieldDifferences(a[$0]!, b[$0]!, at: "\(path)[\($0)]") }
    case .enum:
        // A case with a payload: the case's name, then the payload field by field.
        if let a = left.children.first, let b = right.children.first, a.label == b.label {
            return fieldDifferences(a.value, b.value, at: "\(path).\(a.label ?? "")")
        }
        return String(reflecting: expected) == String(reflecting: actual)
            ? [] : differ("\(expected) ≠ \(actual)")
    default:
        let (a, b) = (Array(left.children), Array(right.children))
        if a.isEmpty && b.isEmpty {
            return String(reflecting: expected) == String(reflecting: actual)
                ? [] : differ("\(expected) ≠ \(actual)")
        }
        guard a.count == b.count else { return differ("\(a.count) fields ≠ \(b.count)") }
        return zip(a, b).enumerated().flatMap { index, pair in
            fieldDifferences(pair.0.value, pair.1.value, at: "\(path).\(pair.0.label ?? String(index))")
        }
    }
}

/// The comparison itself tells what `==` would not.
@Suite struct FieldDifferencesTests {
    struct Sample {
        var date: Date?
        var text: String
        var map: [String: [String]]
    }

    @Test func findsEachDifferingField() {
        let sample = Sample(
            date: Date(timeIntervalSinceReferenceDate: 1), text: "é", map: ["a": ["1"], "b": []])
        #expect(fieldDifferences(sample, sample) == [])
        var other = sample
        other.date = Date(timeIntervalSinceReferenceDate: 1.000_000_000_000_000_2)
        other.text = "e\u{301}"
        other.map["b"] = ["2"]
        #expect(fieldDifferences(sample, other).count == 3)
        other.date = nil
        #expect(fieldDifferences(sample, other).count == 3)
        #expect(fieldDifferences(sample, Sample?.none as Any).count == 1)
        #expect(fieldDifferences(sample, Sample?.some(sample) as Any) == [])
    }
}
