import Foundation
import JobRunnerCore

/// Reads back the job records ``RecordJSON`` writes, without `JSONDecoder`.
///
/// `status --json` of a 100,000-job run decodes every job record; through `JSONDecoder` that
/// alone took over a second. The stored JSON is flat: strings, numbers, `null` and one array of
/// strings, so a reader of exactly that is short. Anything else (a member it does not know, a
/// value of another shape, bytes that are not JSON) makes it answer nil, and the caller falls
/// back to `JSONDecoder`, which reads every version of the record or says why it cannot.
extension RecordJSON {
    private static let stateMember = Array(#","state":""#.utf8)

    /// A stored job record's state, found in its bytes without reading the rest; nil when the
    /// record is not as ``RecordJSON`` writes it.
    ///
    /// `,"state":"` cannot occur inside a string value, where every quote is escaped, so its
    /// first occurrence is the member.
    static func state(in bytes: UnsafeRawBufferPointer) -> JobState? {
        stateMember.withUnsafeBytes { member in
            guard let base = bytes.baseAddress, let pattern = member.baseAddress, bytes.count > member.count
            else { return nil }
            let end = base + bytes.count
            // From comma to comma (memchr), comparing the member's bytes at each.
            var next = base
            while let comma = memchr(next, Int32(UInt8(ascii: ",")), next.distance(to: end)) {
                let at = UnsafeRawPointer(comma)
                if at.distance(to: end) < member.count { return nil }
                if memcmp(at, pattern, member.count) == 0 {
                    let start = base.distance(to: at) + member.count
                    guard let close = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                    let name = bytes[start..<close]
                    return stateNames.first { $0.utf8.elementsEqual(name) }?.state
                }
                next = at + 1
            }
            return nil
        }
    }

    /// Each state's stored name, to match without making a `String`.
    private static let stateNames = JobState.allCases.map { (utf8: Array($0.rawValue.utf8), state: $0) }

    static func decodeJob(_ bytes: UnsafeRawBufferPointer) -> JobRecord? {
        var reader = FlatJSONReader(bytes)
        var jobID: String?
        var occurrence = ""
        var pipeline: String?
        var needs: [String] = []
        var maxAttempts: Int?
        var state: JobState?
        var reasonWords: String?
        var attempts: Int?
        var uncounted = 0
        var crashed = 0
        var exitCode: Int32?
        var firstStartedAt: Date?
        var startedAt: Date?
        var finishedAt: Date?
        var nextAttemptAt: Date?
        var waitingSince: Date?
        var allowFailure = false
        var when = RunCondition.success
        let read = reader.readObject { (name: JobMember, reader: inout FlatJSONReader) -> Bool in
            switch name {
            case .jobID: jobID = reader.string()
            case .occurrence: occurrence = reader.string() ?? ""
            case .pipeline: pipeline = reader.string()
            case .needs:
                guard let values = reader.strings() else { return false }
                needs = values
            case .maxAttempts: maxAttempts = reader.integer()
            case .state: state = reader.string().flatMap(JobState.init(rawValue:))
            case .reason: reasonWords = reader.string()
            case .attempts: attempts = reader.integer()
            case .uncountedAttempts: uncounted = reader.integer() ?? 0
            case .crashedInARow: crashed = reader.integer() ?? 0
            case .exitCode: exitCode = reader.integer().flatMap { Int32(exactly: $0) }
            case .firstStartedAt: firstStartedAt = reader.date()
            case .startedAt: startedAt = reader.date()
            case .finishedAt: finishedAt = reader.date()
            case .nextAttemptAt: nextAttemptAt = reader.date()
            case .waitingSince: waitingSince = reader.date()
            case .allowFailure:
                guard let value = reader.bool() else { return false }
                allowFailure = value
            case .when:
                guard let value = reader.string().flatMap(RunCondition.init(rawValue:)) else { return false }
                when = value
            }
            return true
        }
        guard read, let jobID, let pipeline, let state, let attempts else { return nil }
        var record = JobRecord(
            jobID: jobID, occurrence: occurrence, pipeline: pipeline, needs: needs, maxAttempts: maxAttempts,
            state: state, reason: reasonWords.map { JobReason(words: $0, state: state) }, attempts: attempts,
            uncountedAttempts: uncounted, crashedInARow: crashed, exitCode: exitCode,
            firstStartedAt: firstStartedAt, startedAt: startedAt, finishedAt: finishedAt,
            nextAttemptAt: nextAttemptAt)
        record.waitingSince = waitingSince
        record.allowFailure = allowFailure
        record.when = when
        return record
    }
}

extension RecordJSON {
    /// A stored attempt record, or nil when it is not as ``RecordJSON`` writes it (the caller
    /// falls back to `JSONDecoder`). Resuming a run reads every attempt of it.
    static func decodeAttempt(_ bytes: UnsafeRawBufferPointer) -> AttemptRecord? {
        var reader = FlatJSONReader(bytes)
        var jobID: String?
        var occurrence = ""
        var number: Int?
        var outcome: AttemptOutcome?
        var startedAt: Date?
        var finishedAt: Date?
        var exitCode: Int32?
        var signal: Int32?
        var reason: String?
        var pid: Int32?
        var pidStartTime: UInt64?
        var logPath: String?
        let read = reader.readObject { (name: AttemptMember, reader: inout FlatJSONReader) -> Bool in
            switch name {
            case .jobID: jobID = reader.string()
            case .occurrence: occurrence = reader.string() ?? ""
            case .number: number = reader.integer()
            case .outcome:
                guard let value = reader.string().flatMap(AttemptOutcome.init(rawValue:)) else {
                    return false
                }
                outcome = value
            case .startedAt: startedAt = reader.date()
            case .finishedAt: finishedAt = reader.date()
            case .exitCode: exitCode = reader.integer().flatMap { Int32(exactly: $0) }
            case .signal: signal = reader.integer().flatMap { Int32(exactly: $0) }
            case .reason: reason = reader.string()
            case .pid: pid = reader.integer().flatMap { Int32(exactly: $0) }
            case .pidStartTime:
                guard let value = reader.integer().flatMap({ UInt64(exactly: $0) }) else { return false }
                pidStartTime = value
            case .logPath: logPath = reader.string()
            }
            return true
        }
        guard read, let jobID, let number, let startedAt else { return nil }
        return AttemptRecord(
            jobID: jobID, occurrence: occurrence, number: number, outcome: outcome, startedAt: startedAt,
            finishedAt: finishedAt, exitCode: exitCode, signal: signal, reason: reason, pid: pid,
            pidStartTime: pidStartTime, logPath: logPath)
    }
}

extension RecordJSON {
    private static let outcomeMember = Array(#""outcome":""#.utf8)

    /// Whether a stored attempt record shows an outcome in its bytes, found without reading the
    /// rest. True for a record as ``RecordJSON`` or `JSONEncoder` writes one with an outcome
    /// (nil members are left out); false means none was found, and the caller reads the record.
    ///
    /// `"outcome":"` cannot occur inside a string value, where every quote is escaped; after a
    /// `{` or a `,` it is the member.
    static func hasOutcome(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let member = outcomeMember
        guard bytes.count > member.count else { return false }
        for index in 1...(bytes.count - member.count)
        where bytes[index] == member[0] && bytes[index + 1] == member[1]
            && (bytes[index - 1] == UInt8(ascii: ",") || bytes[index - 1] == UInt8(ascii: "{"))
            && member.indices.allSatisfy({ bytes[index + $0] == member[$0] })
        {
            return true
        }
        return false
    }
}

/// A record's members as a reader matches them: their names' bytes, in the order
/// `RecordJSON.encode` writes them.
protocol StoredMember {
    static var names: [(utf8: [UInt8], member: Self)] { get }
}

/// The members of a stored attempt record, in the order `RecordJSON.encode` writes them.
private enum AttemptMember: CaseIterable, StoredMember {
    case jobID, occurrence, number, outcome, startedAt, finishedAt, exitCode, signal, reason, pid
    case pidStartTime, logPath

    static let names: [(utf8: [UInt8], member: AttemptMember)] = allCases.map {
        (Array(String(describing: $0).utf8), $0)
    }
}

/// The members of a stored job record, in the order `RecordJSON.encode` writes them; each
/// case is named as its member.
enum JobMember: CaseIterable, StoredMember {
    case jobID, occurrence, pipeline, needs, maxAttempts, state, reason, attempts, uncountedAttempts
    case crashedInARow, exitCode, firstStartedAt, startedAt, finishedAt, nextAttemptAt, waitingSince
    case allowFailure, when

    static let names: [(utf8: [UInt8], member: JobMember)] = allCases.map {
        (Array(String(describing: $0).utf8), $0)
    }
}

/// A cursor over one flat JSON object's bytes. Each reading method answers nil (and sets
/// `failed`) when the bytes are not what it reads.
struct FlatJSONReader {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private(set) var failed = false

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// How many bytes it has read.
    var offset: Int { index }

    mutating func atEnd() -> Bool {
        skipSpace()
        return index == bytes.count
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// Takes `byte` if it comes next (after white space).
    mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    mutating func takeNull() -> Bool {
        skipSpace()
        guard bytes.count - index >= 4, bytes[index] == UInt8(ascii: "n"),
            bytes[index + 1] == UInt8(ascii: "u"),
            bytes[index + 2] == UInt8(ascii: "l"), bytes[index + 3] == UInt8(ascii: "l")
        else { return false }
        index += 4
        return true
    }

    /// `true` or `false`.
    mutating func bool() -> Bool? {
        skipSpace()
        for (word, value) in [("true", true), ("false", false)] {
            let letters = Array(word.utf8)
            if bytes.count - index >= letters.count,
                letters.indices.allSatisfy({ bytes[index + $0] == letters[$0] })
            {
                index += letters.count
                return value
            }
        }
        return fail()
    }

    private mutating func fail<Value>() -> Value? {
        failed = true
        return nil
    }

    /// A member name of a job record, compared as bytes (no `String` made): the one at `next`
    /// in ``JobMember/names`` first, then the others; `next` moves past the one found. Nil for
    /// a name it does not know or one with an escape in it.
    /// Reads one object to its end, handing each member that is not `null` to `body`, which
    /// reads its value; false when the bytes are not such an object or `body` declines.
    /// Members come in the order `RecordJSON.encode` writes them: the next one is tried first.
    mutating func readObject<Member: StoredMember>(
        _ body: (Member, inout FlatJSONReader) -> Bool
    ) -> Bool {
        guard take(UInt8(ascii: "{")) else { return false }
        var first = true
        var next = 0
        while !take(UInt8(ascii: "}")) {
            if !first { guard take(UInt8(ascii: ",")) else { return false } }
            first = false
            guard let name: Member = member(expecting: &next), take(UInt8(ascii: ":")) else { return false }
            if takeNull() { continue }
            guard body(name, &self), !failed else { return false }
        }
        return atEnd()
    }

    mutating func member<Member: StoredMember>(expecting next: inout Int) -> Member? {
        guard take(UInt8(ascii: "\"")) else { return fail() }
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
            index += 1
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return fail() }
        let name = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
        index += 1
        let names = Member.names
        guard let start = name.baseAddress else { return fail() }
        func matches(_ candidate: Int) -> Bool {
            names[candidate].utf8.count == name.count
                && names[candidate].utf8.withUnsafeBytes { known in
                    known.baseAddress.map { memcmp($0, start, name.count) == 0 } ?? false
                }
        }
        if next < names.count, matches(next) {
            next += 1
            return names[next - 1].member
        }
        for candidate in names.indices where matches(candidate) {
            next = candidate + 1
            return names[candidate].member
        }
        return fail()
    }

    mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return fail() }
        let start = index
        // The common case: no escapes, read in one go; ASCII (ids, states, pipelines) needs no
        // validation, and `String(validating:)` costs more than the rest of the reading.
        var ascii = true
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
            if bytes[index] < 0x20 { return fail() }
            if bytes[index] >= 0x80 { ascii = false }
            index += 1
        }
        guard index < bytes.count else { return fail() }
        if bytes[index] == UInt8(ascii: "\"") {
            index += 1
            let text = UnsafeRawBufferPointer(rebasing: bytes[start..<index - 1])
            if ascii { return String(decoding: text.assumingMemoryBound(to: UInt8.self), as: UTF8.self) }
            return String(validating: text, as: UTF8.self) ?? fail()
        }
        var text = [UInt8](bytes[start..<index])
        while bytes[index] == UInt8(ascii: "\\") {
            index += 1
            guard index < bytes.count else { return fail() }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
            case UInt8(ascii: "b"): text.append(0x08)
            case UInt8(ascii: "f"): text.append(0x0C)
            case UInt8(ascii: "n"): text.append(0x0A)
            case UInt8(ascii: "r"): text.append(0x0D)
            case UInt8(ascii: "t"): text.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4() else { return fail() }
                if (0xD800..<0xDC00).contains(scalar) {
                    // A surrogate pair: the low half must follow as another \u escape.
                    guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let low = hex4(),
                        (0xDC00..<0xE000).contains(low)
                    else { return fail() }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else { return fail() }
                text.append(contentsOf: String(Character(unicode)).utf8)
            default:
                return fail()
            }
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\")
            {
                if bytes[index] < 0x20 { return fail() }
                text.append(bytes[index])
                index += 1
            }
            guard index < bytes.count else { return fail() }
        }
        index += 1
        return String(validating: text, as: UTF8.self) ?? fail()
    }

    private mutating func hex4() -> UInt32? {
        guard bytes.count - index >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    mutating func strings() -> [String]? {
        guard take(UInt8(ascii: "[")) else { return fail() }
        var values: [String] = []
        if take(UInt8(ascii: "]")) { return values }
        repeat {
            guard let value = string() else { return fail() }
            values.append(value)
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "]")) ? values : fail()
    }

    /// An object of integers by name; nil when a name comes twice (left to `JSONDecoder`).
    mutating func stringIntegers() -> [String: Int]? {
        guard take(UInt8(ascii: "{")) else { return fail() }
        var values: [String: Int] = [:]
        if take(UInt8(ascii: "}")) { return values }
        repeat {
            guard let name = string(), take(UInt8(ascii: ":")), let value = integer() else { return fail() }
            guard values.updateValue(value, forKey: name) == nil else { return fail() }
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}")) ? values : fail()
    }

    /// An integer as JSON writes one: an optional minus sign, then digits; nil when it does not
    /// fit an `Int` or has a fraction or an exponent.
    mutating func integer() -> Int? {
        skipSpace()
        let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let start = index
        // Summed on the negative side, which also holds Int.min.
        var value = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, under) = times.subtractingReportingOverflow(Int(bytes[index] - UInt8(ascii: "0")))
            guard !overflow, !under else { return fail() }
            value = sum
            index += 1
        }
        // `01` is not JSON; `JSONDecoder` refuses it.
        guard index > start, bytes[start] != UInt8(ascii: "0") || index == start + 1 else { return fail() }
        if index < bytes.count,
            [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index])
        {
            return fail()
        }
        if negative { return value }
        return value == Int.min ? fail() : -value
    }

    /// A JSON number's value; nil for text JSON does not allow as a number (`+1`, `01`, `1.`),
    /// which `JSONDecoder` refuses too.
    mutating func double() -> Double? {
        skipSpace()
        let start = index
        guard skipNumber() else { return fail() }
        let length = index - start
        // strtod on a copy ended by NUL, without making a `String` (dates are 17 digits or more,
        // past a `String`'s inline room). A number strtod does not read whole (a locale with a
        // decimal comma) is declined, for `JSONDecoder` to read.
        let value = withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { text -> Double? in
            guard let base = text.baseAddress else { return nil }
            for offset in 0..<length { text[offset] = CChar(bitPattern: bytes[start + offset]) }
            text[length] = 0
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(base, &end)
            return end == base + length ? value : nil
        }
        return value ?? fail()
    }

    /// Moves past a number as JSON writes one: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    private mutating func skipNumber() -> Bool {
        func digits() -> Int {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                index += 1
            }
            return index - start
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let leading = index < bytes.count && bytes[index] == UInt8(ascii: "0")
        let whole = digits()
        guard whole > 0, !(leading && whole > 1) else { return false }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return false }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { return false }
        }
        return true
    }

    /// A date as `JSONEncoder` writes one by default: seconds since the reference date.
    mutating func date() -> Date? {
        double().map { Date(timeIntervalSinceReferenceDate: $0) }
    }
}
