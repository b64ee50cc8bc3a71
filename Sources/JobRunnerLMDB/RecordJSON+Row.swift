import Foundation
import JobRunnerCore

extension RecordJSON {
    /// A job record read as ``decodeJobProgress(_:)`` reads it, but only when its bytes are
    /// exactly as ``encode(_:)-(JobRecord)`` writes them: members in order, no white space, plain
    /// ASCII strings without escapes. Each member is then matched by one comparison where it must
    /// be, not looked for; anything else answers nil, for the general reader. Resuming a run of
    /// 100,000 jobs reads 100,000 such rows.
    ///
    /// The members this version leaves out at their defaults (occurrence, needs, uncounted
    /// attempts, crashes in a row) may be there or not: rows of earlier versions have them all.
    static func decodeWrittenJobProgress(_ bytes: UnsafeRawBufferPointer) -> JobProgress? {
        var row = WrittenRow(bytes)
        guard row.literal(#"{"jobID":"#), let jobID = row.string() else { return nil }
        var occurrence = ""
        if row.literal(#","occurrence":"#) {
            guard let text = row.string() else { return nil }
            occurrence = text
        }
        guard row.literal(#","pipeline":"#), row.skipString() else { return nil }
        if row.literal(#","needs":["#), !row.literal("]") {
            repeat {
                guard row.skipString() else { return nil }
            } while row.literal(",")
            guard row.literal("]") else { return nil }
        }
        if row.literal(#","maxAttempts":"#) { guard row.integer() != nil else { return nil } }
        guard row.literal(#","state":"#), let state = row.state() else { return nil }
        var reason: JobReason?
        if row.literal(#","reason":"#) {
            guard let words = row.string() else { return nil }
            reason = JobReason(words: words, state: state)
        }
        guard row.literal(#","attempts":"#), let attempts = row.integer() else { return nil }
        var uncounted = 0
        if row.literal(#","uncountedAttempts":"#) {
            guard let count = row.integer() else { return nil }
            uncounted = count
        }
        var crashed = 0
        if row.literal(#","crashedInARow":"#) {
            guard let count = row.integer() else { return nil }
            crashed = count
        }
        var progress = JobProgress(
            jobID: jobID, occurrence: occurrence, state: state, reason: reason, attempts: attempts,
            uncountedAttempts: uncounted, crashedInARow: crashed)
        if row.literal(#","exitCode":"#) {
            guard let code = row.integer() else { return nil }
            progress.exitCode = Int32(exactly: code)
        }
        // Each date in its place, or left out.
        if row.literal(#","firstStartedAt":"#) {
            guard let date = row.date() else { return nil }
            progress.firstStartedAt = date
        }
        if row.literal(#","startedAt":"#) {
            guard let date = row.date() else { return nil }
            progress.startedAt = date
        }
        if row.literal(#","finishedAt":"#) {
            guard let date = row.date() else { return nil }
            progress.finishedAt = date
        }
        if row.literal(#","nextAttemptAt":"#) {
            guard let date = row.date() else { return nil }
            progress.nextAttemptAt = date
        }
        if row.literal(#","waitingSince":"#) {
            guard let date = row.date() else { return nil }
            progress.waitingSince = date
        }
        if row.literal(#","allowFailure":"#) {
            guard row.literal("true") || row.literal("false") else { return nil }
        }
        if row.literal(#","when":"#) {
            guard let words = row.string(), RunCondition(rawValue: words) != nil else { return nil }
        }
        guard row.literal("}"), row.atEnd else { return nil }
        return progress
    }

}

/// A cursor over a record's bytes as ``RecordJSON`` writes them.
private struct WrittenRow {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    /// Takes `text` if it comes next.
    mutating func literal(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.count - index >= count, let base = bytes.baseAddress,
            memcmp(base + index, text.utf8Start, count) == 0
        else { return false }
        index += count
        return true
    }

    /// The bounds of a string of printable ASCII without escapes; nil for any other.
    private mutating func plain() -> Range<Int>? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var end = start
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                index = end + 1
                return start..<end
            }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            end += 1
        }
        return nil
    }

    mutating func string() -> String? {
        guard let range = plain() else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    mutating func skipString() -> Bool { plain() != nil }

    mutating func state() -> JobState? {
        guard let range = plain() else { return nil }
        let name = UnsafeRawBufferPointer(rebasing: bytes[range])
        return Self.states.first { $0.utf8.elementsEqual(name) }?.state
    }

    private static let states = JobState.allCases.map { (utf8: Array($0.rawValue.utf8), state: $0) }

    /// An integer as ``FlatJSONReader/integer()`` reads one; nil for any it declines.
    mutating func integer() -> Int? {
        var reader = FlatJSONReader(UnsafeRawBufferPointer(rebasing: bytes[index...]))
        guard let value = reader.integer() else { return nil }
        index += reader.offset
        return value
    }

    /// A date as ``FlatJSONReader/date()`` reads one.
    mutating func date() -> Date? {
        var reader = FlatJSONReader(UnsafeRawBufferPointer(rebasing: bytes[index...]))
        guard let value = reader.date() else { return nil }
        index += reader.offset
        return value
    }
}
