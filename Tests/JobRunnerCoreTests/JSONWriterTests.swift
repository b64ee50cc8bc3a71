import Foundation
import JobRunnerCore
import Testing

@Suite struct JSONWriterTests {
    @Test func valuesReadBackAsWritten() throws {
        let value = JSONValue.object([
            "text": .string("quote \" back\\slash\nnew line \u{7} bell é 🚀 /slash"),
            "numbers": .array([
                .int(0), .int(-42), .int(Int.max), .double(0.1), .double(-1e-300), .double(1e300),
            ]),
            "flags": .array([.bool(true), .bool(false), .null]),
            "nested": .object([
                "empty": .object([:]), "list": .array([]), "deep": .array([.array([.string("x")])]),
            ]),
            "": .string("empty key"),
        ])
        var writer = JSONWriter()
        writer.value(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(writer.bytes)) == value)
    }

    /// Integers of every width are written as `String(value)` writes them.
    @Test func integersAreWrittenInDecimalAsStringWritesThem() {
        let values: [any BinaryInteger] = [
            0, 7, -7, 10, -10, 1_234_567_890, Int.max, Int.min, Int32.min, Int32.max, UInt64.max,
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
        writer.endObject()
        #expect(
            String(decoding: writer.bytes, as: UTF8.self)
                == #"{"a":"1","n":2,"list":["x","y"],"map":{"a":"1","b":"2"}}"#)
    }

    /// Text made in place (a date) is written as it is, or null, and separated like any member.
    @Test func unescapedBytesAreWrittenAsTheyAreOrNull() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.nullable("a", "1")
        Array("2026-11-22T10:00:00.123Z".utf8).withUnsafeBytes { writer.nullable("at", unescaped: $0) }
        writer.nullable("none", unescaped: nil)
        writer.endObject()
        #expect(
            String(decoding: writer.bytes, as: UTF8.self)
                == #"{"a":"1","at":"2026-11-22T10:00:00.123Z","none":null}"#)
    }

    @Test func numbersJSONCannotHoldBecomeNull() {
        var writer = JSONWriter()
        writer.beginArray()
        writer.double(.infinity)
        writer.double(.nan)
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[null,null]")
    }
}
