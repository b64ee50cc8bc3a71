import Foundation
import JobRunnerJSON
import Testing

/// The reader reads what `JSONDecoder` reads, the same, or declines (nil, `failed`); it never
/// reads past its bytes, however they are cut or nested.
@Suite struct JSONReaderTests {
    static func reading<Value>(_ text: String, _ read: (inout JSONReader) -> Value?) -> Value? {
        Array(text.utf8).withUnsafeBytes { bytes in
            var reader = JSONReader(bytes)
            guard let value = read(&reader), reader.atEnd() else { return nil }
            return value
        }
    }

    // MARK: Strings

    /// Whatever `JSONEncoder` writes reads back as the text, escapes and all.
    @Test(arguments: JSONWriterTests.texts) func stringsJSONEncoderWrote(text: String) throws {
        let encoded = String(decoding: try JSONEncoder().encode(text), as: UTF8.self)
        #expect(Self.reading(encoded) { $0.string() }.map { Array($0.utf8) } == Array(text.utf8))
        for style in [JSONWriter.Style.compact, .shortEscapes, .foundation] {
            let written = String(decoding: JSONWriter.quoted(text, style: style), as: UTF8.self)
            #expect(Self.reading(written) { $0.string() }.map { Array($0.utf8) } == Array(text.utf8))
        }
    }

    /// Escapes as JSON writes them, each read as `JSONDecoder` reads it.
    @Test(arguments: [
        #""\"\\\/\b\f\n\r\t""#, #""\u0041\u00e9\u20AC""#, #""\ud83d\ude80 rocket""#, #""\u0000""#,
        #""é 🚀 plain""#, #""""#,
    ])
    func escapesReadAsJSONDecoderReadsThem(text: String) throws {
        let expected = try JSONDecoder().decode(String.self, from: Data(text.utf8))
        #expect(Self.reading(text) { $0.string() } == expected)
    }

    /// Lone surrogates, escapes JSON does not have, control characters, invalid UTF-8 and
    /// unended strings are declined.
    @Test(arguments: [
        #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\ud800x""#, #""\ud83d\ud83d""#, #""\x""#,
        #""\u12""#, #""\u12g4""#, "\"a\u{1}b\"", "\"tab\there\"", #""unended"#, #""\"#, "\"", "", "'single'",
    ])
    func malformedStringsAreDeclined(text: String) {
        Array(text.utf8).withUnsafeBytes { bytes in
            var reader = JSONReader(bytes)
            #expect(reader.string() == nil)
            #expect(reader.failed)
        }
    }

    @Test func invalidUTF8IsDeclined() {
        for bytes: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0xC0, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
        ] {
            bytes.withUnsafeBytes { bytes in
                var reader = JSONReader(bytes)
                #expect(reader.string() == nil)
            }
        }
    }

    /// A plain string is read where it lies; anything else is not one, without failing.
    @Test func plainStringsAreReadWhereTheyLie() {
        #expect(
            Self.reading(#""abc""#) { $0.plainString().map { String(decoding: $0, as: UTF8.self) } } == "abc")
        for text in [#""a\"b""#, #""é""#, " \"a\"", "\"a\u{1}\"", #""open"#] {
            Array(text.utf8).withUnsafeBytes { bytes in
                var reader = JSONReader(bytes)
                #expect(reader.plainString() == nil, "\(text)")
                #expect(!reader.failed)
            }
        }
    }

    // MARK: Numbers

    @Test(arguments: [
        "0", "-0", "7", "-7", "1234567890", "9223372036854775807", "-9223372036854775808", " 12 ",
    ])
    func integersReadAsJSONDecoderReadsThem(text: String) throws {
        #expect(
            Self.reading(text) { $0.integer() } == (try JSONDecoder().decode(Int.self, from: Data(text.utf8)))
        )
    }

    /// Numbers that are not JSON, or not whole, or beyond `Int`, are declined.
    @Test(arguments: [
        "01", "-01", "+1", "1.", "1.5", "1e3", "1E3", "0e3", "-", "", "9223372036854775808",
        "-9223372036854775809", "18446744073709551615", "\"1\"", "true", "null", "0x10", ".5",
    ])
    func unwholeOrMalformedIntegersAreDeclined(text: String) {
        #expect(Self.reading(text) { $0.integer() } == nil)
    }

    @Test(arguments: JSONFixtures.doubles) func doublesReadAsJSONDecoderReadsThem(number: Double) throws {
        for text in [number.description, String(decoding: try JSONEncoder().encode(number), as: UTF8.self)] {
            let expected = try JSONDecoder().decode(Double.self, from: Data(text.utf8))
            #expect(Self.reading(text) { $0.double() }?.bitPattern == expected.bitPattern, "\(text)")
        }
    }

    @Test(arguments: [
        "1e999", "-1e999", "01.5", "1.", ".5", "1e", "1e+", "+1", "0e3", "NaN", "Infinity", "\"1\"",
    ])
    func malformedOrInfiniteDoublesAreDeclined(text: String) {
        #expect(Self.reading(text) { $0.double() } == nil)
    }

    // MARK: Containers

    /// Nesting up to the limit is stepped over; deeper is declined, however deep, without
    /// running out of stack.
    @Test func nestingBeyondTheLimitIsDeclined() {
        func nested(_ depth: Int) -> String {
            String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        }
        #expect(Self.reading(nested(JSONReader.depthLimit)) { $0.skipValue() ? true : nil } == true)
        #expect(Self.reading(nested(JSONReader.depthLimit + 1)) { $0.skipValue() ? true : nil } == nil)
        #expect(Self.reading(nested(100_000)) { $0.skipValue() ? true : nil } == nil)
        let objects = String(repeating: #"{"a":"#, count: 100) + "1" + String(repeating: "}", count: 100)
        #expect(Self.reading(objects) { $0.skipValue() ? true : nil } == nil)
    }

    static let document = #"""
        {"a": [1, -2.5e-3, "x\n", true, false, null, {"b": {}}, []], "c": {"d": "é"}, "e": ""}
        """#

    /// A document cut anywhere is declined, never read past its end.
    @Test func truncatedDocumentsAreDeclined() {
        let bytes = Array(Self.document.utf8)
        #expect(Self.reading(Self.document) { $0.skipValue() ? true : nil } == true)
        for end in 0..<bytes.count - 1 {
            let cut = String(decoding: bytes[..<end], as: UTF8.self)
            #expect(Self.reading(cut) { $0.skipValue() ? true : nil } == nil, "\(cut)")
            #expect(Self.reading(cut) { $0.map { $0.skipValue() ? 1 : nil } } == nil, "\(cut)")
        }
    }

    @Test func mapsAndArraysReadAsJSONDecoderReadsThem() throws {
        let text = #"{"x": "1", "y\n": "2", "é": ""}"#
        #expect(
            Self.reading(text) { $0.stringMap() }
                == (try JSONDecoder().decode([String: String].self, from: Data(text.utf8))))
        #expect(Self.reading(#"["a", "b\"", ""]"#) { $0.strings() } == ["a", "b\"", ""])
        #expect(Self.reading("[]") { $0.strings() } == [])
        #expect(Self.reading(#"{"a": "1", "a": "2"}"#) { $0.stringMap() } == nil)
        #expect(Self.reading(#"{"a": 1}"#) { $0.stringMap() } == nil)
        #expect(Self.reading(#"["a", 1]"#) { $0.strings() } == nil)
        #expect(Self.reading(#"["a",]"#) { $0.strings() } == nil)
        #expect(Self.reading(#"{"a": "1",}"#) { $0.stringMap() } == nil)
        #expect(Self.reading(#"null"#) { $0.nullable { $0.string() } } == .some(nil))
        #expect(Self.reading(#"1"#) { $0.nullable { $0.string() } } == nil)
    }

    enum Member: CaseIterable { case id, count, flag }

    /// A record's members: known ones in any order, `null` as absent; an unknown or repeated one,
    /// an escaped or non-ASCII key, or a value of another type declines the whole record.
    @Test func recordsReadTheirMembersOnce() {
        func record(_ text: String) -> [String]? {
            Self.reading(text) { reader -> [String]? in
                var seen: [String] = []
                let read = reader.object(JSONMembers<Member>()) { member, reader in
                    switch member {
                    case .id: seen.append("id=" + (reader.string() ?? "?"))
                    case .count: seen.append("count=\(reader.integer() ?? -1)")
                    case .flag: seen.append("flag=\(reader.bool().map(String.init) ?? "?")")
                    }
                    return true
                }
                return read ? seen : nil
            }
        }
        #expect(record(#"{"id":"a","count":1,"flag":true}"#) == ["id=a", "count=1", "flag=true"])
        #expect(record(#"{ "flag" : false , "id" : "b" }"#) == ["flag=false", "id=b"])
        #expect(record(#"{"id":null,"count":2}"#) == ["count=2"])
        #expect(record("{}") == [])
        #expect(record(#"{"id":"a","id":"b"}"#) == nil)
        #expect(record(#"{"other":1}"#) == nil)
        #expect(record(#"{"\u0069d":"a"}"#) == nil)
        #expect(record(#"{"idé":"a"}"#) == nil)
        #expect(record(#"{"count":"1"}"#) == nil)
        #expect(record(#"{"flag":1}"#) == nil)
        #expect(record(#"{"id":"a""#) == nil)
        #expect(record(#"{"id":"a"}}"#) == nil)
        #expect(record(#"["id"]"#) == nil)
    }

    /// Keys are handed over as bytes, compared without making a `String`.
    @Test func keysCompareAsTheirBytes() {
        let text = #"{"status": 1, "": 2}"#
        var keys: [String] = []
        _ = Self.reading(text) { reader -> Bool? in
            reader.object { reader, key in
                keys.append(String(decoding: key.bytes, as: UTF8.self))
                #expect(key.equals("status") == (keys.last == "status"))
                #expect(key.equals("") == (keys.last == ""))
                return reader.integer() != nil
            } ? true : nil
        }
        #expect(keys == ["status", ""])
    }
}
