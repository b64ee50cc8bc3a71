import Foundation
import JobRunnerJSON

/// Dates in JSON as `JSONEncoder` and `JSONDecoder` write and read them by default: seconds
/// since the reference date, as a number.
extension JSONWriter {
    /// A date member whose name is a literal with its punctuation (`,"startedAt":`); nothing at
    /// all when `value` is nil.
    @inlinable
    public mutating func member(raw name: StaticString, _ value: Date?) {
        member(raw: name, value?.timeIntervalSinceReferenceDate)
    }

    /// A date member, left out when nil.
    public mutating func member(_ name: String, _ value: Date?) {
        member(name, value?.timeIntervalSinceReferenceDate)
    }

    /// A date, as seconds since the reference date.
    public mutating func date(_ value: Date) {
        double(value.timeIntervalSinceReferenceDate)
    }
}

extension JSONReader {
    /// A date as `JSONEncoder` writes one by default: seconds since the reference date.
    @inlinable
    public mutating func date() -> Date? {
        double().map { Date(timeIntervalSinceReferenceDate: $0) }
    }
}
