import Foundation
import JobRunnerCore
import JobRunnerJSON
import Testing

/// The writer's values read back as `JSONDecoder` reads them, and each style's strings are
/// written byte for byte as the documents written in that style always were.
@Suite struct JSONWriterTests {
    @Test func valuesReadBackAsWritten() throws {
        let value = JSONValue.object([
            "text": .string("quote \" back\\slash\nnew line \u{7} bell é 🚀 /slash"),
            "numbers": .array([
                .int(0), .int(-42), .int(Int.max), .int(Int.min), .double(0.1), .double(-1e-300),
                .double(1e300),
            ]),
            "flags": .array([.bool(true), .bool(false), .null]),
            "nested": .object([
                "empty": .object([:]), "list": .array([]), "deep": .array([.array([.string("x")])]),
            ]),
            "": .string("empty key"),
        ])
        for style in [JSONWriter.Style.compact, .shortEscapes, .foundation] {
            var writer = JSONWriter(style: style)
            writer.value(value)
            #expect(try JSONDecoder().decode(JSONValue.self, from: Data(writer.bytes)) == value, "\(style)")
        }
    }

    /// Integers of every width are written as `String(value)` writes them.
    @Test func integersAreWrittenInDecimalAsStringWritesThem() {
        let values: [any BinaryInteger] = [
            0, 7, -7, 9, 10, -10, 1_234_567_890, Int.max, Int.min, Int32.min, Int32.max, UInt64.max,
            UInt64(Int64.max) + 1, Int8.min, UInt8.max,
        ]
        for value in values {
            var writer = JSONWriter()
            writer.integer(value)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == String(describing: value))
        }
    }

    @Test func membersAreSeparatedAndAbsentOnesLeftOut() throws {
        var writer = JSONWriter()
        writer.beginObject()
        writer.member("a", "1")
        writer.member("missing", String?.none)
        writer.member("count", Int?.none)
        writer.member("n", 2)
        writer.member("list", ["x", "y"])
        writer.member("map", ["b": "2", "a": "1"])
        writer.member("yes", true)
        writer.endObject()
        #expect(
            String(decoding: writer.bytes, as: UTF8.self)
                == #"{"a":"1","n":2,"list":["x","y"],"map":{"a":"1","b":"2"},"yes":true}"#)
    }

    /// Literal members: the name with its punctuation as given, nothing at all for nil.
    @Test func literalMembersAreWrittenAsGiven() {
        var writer = JSONWriter()
        writer.raw(#"{"id":"#)
        writer.string("a\"b")
        writer.member(raw: #","none":"#, String?.none)
        writer.member(raw: #","count":"#, Int32(-3))
        writer.member(raw: #","big":"#, UInt64.max)
        writer.member(raw: #","seconds":"#, 1.5)
        writer.member(raw: #","at":"#, Date(timeIntervalSinceReferenceDate: 2))
        writer.member(raw: #","never":"#, Date?.none)
        writer.raw("}")
        #expect(
            String(decoding: writer.bytes, as: UTF8.self)
                == #"{"id":"a\"b","count":-3,"big":18446744073709551615,"seconds":1.5,"at":2.0}"#)
        writer.clear()
        #expect(writer.bytes.isEmpty)
    }

    /// Text made in place (a date) is written as it is, or null, and separated like any member.
    @Test func unescapedBytesAreWrittenAsTheyAreOrNull() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.nullable("a", "1")
        Array("2026-11-22T10:00:00.123Z".utf8).withUnsafeBytes { writer.nullable("at", unescaped: $0) }
        writer.nullable("none", unescaped: nil)
        writer.nullable("count", Int?.none)
        writer.endObject()
        #expect(
            String(decoding: writer.bytes, as: UTF8.self)
                == #"{"a":"1","at":"2026-11-22T10:00:00.123Z","none":null,"count":null}"#)
    }

    @Test func numbersJSONCannotHoldBecomeNull() {
        var writer = JSONWriter()
        writer.beginArray()
        writer.double(.infinity)
        writer.double(-.infinity)
        writer.double(.nan)
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[null,null,null]")
    }

    /// A long document written out in pieces is the document written at once.
    @Test func drainedPiecesMakeTheWholeDocument() {
        var whole = JSONWriter()
        var pieces = JSONWriter()
        var drained: [UInt8] = []
        for writer in [0, 1] {
            var json = writer == 0 ? whole : pieces
            json.beginArray()
            for index in 0..<100 {
                json.string("item \(index)")
                if writer == 1, index % 7 == 0 { drained += json.drain() }
            }
            json.endArray()
            if writer == 0 { whole = json } else { pieces = json }
        }
        drained += pieces.drain()
        #expect(drained == whole.bytes)
    }

    // MARK: Styles

    /// Every character below 0x80, and text beyond ASCII.
    static let texts: [String] =
        (0..<0x80).map { String(UnicodeScalar(UInt8($0))) } + JSONFixtures.awkward

    /// ``JSONWriter/Style/foundation`` writes strings as `JSONEncoder` does, byte for byte.
    @Test(arguments: texts) func foundationStringsAreJSONEncodersBytes(text: String) throws {
        #expect(JSONWriter.quoted(text, style: .foundation) == Array(try JSONEncoder().encode(text)))
    }

    /// ``JSONWriter/Style/foundation`` writes numbers as `JSONEncoder` does, whole ones
    /// without `.0`.
    @Test(arguments: JSONFixtures.doubles) func foundationNumbersAreJSONEncodersBytes(number: Double) throws {
        var writer = JSONWriter(style: .foundation)
        writer.double(number)
        #expect(writer.bytes == Array(try JSONEncoder().encode(number)))
    }

    /// The compact style escapes only what JSON requires, every control character as
    /// `\u00xx`; the short style writes `\n`, `\r` and `\t` so. Both read back as the text.
    @Test(arguments: texts) func compactAndShortStringsReadBack(text: String) throws {
        for style in [JSONWriter.Style.compact, .shortEscapes] {
            let bytes = JSONWriter.quoted(text, style: style)
            #expect(Array(try JSONDecoder().decode(String.self, from: Data(bytes)).utf8) == Array(text.utf8))
        }
        #expect(
            JSONWriter.quoted("a\n\t\r\u{1}/", style: .compact)
                == Array(#""a\u000a\u0009\u000d\u0001/""#.utf8))
        #expect(JSONWriter.quoted("a\n\t\r\u{1}/", style: .shortEscapes) == Array(#""a\n\t\r\u0001/""#.utf8))
        #expect(
            JSONWriter.quoted("a\n\t\r\u{8}\u{c}\u{1}/", style: .foundation)
                == Array(#""a\n\t\r\b\f\u0001\/""#.utf8))
    }

    /// `JSONValue.quote` and `jsonText`, written with the short style, are what they were
    /// before there was a writer (a parameter's text in `JOBRUNNER_PARAM_<KEY>`, `runs --json`).
    @Test(arguments: texts) func valueTextIsAsItWas(text: String) {
        #expect(JSONValue.quote(text) == JSONFixtures.earlierQuote(text))
        let value = JSONValue.object([
            text: .array([.string(text), .int(-1), .double(0.5), .double(2), .null])
        ])
        #expect(
            value.jsonText
                == "{" + JSONFixtures.earlierQuote(text) + ":[" + JSONFixtures.earlierQuote(text)
                + ",-1,0.5,2.0,null]}")
    }
}
