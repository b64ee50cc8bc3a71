import Foundation
import JobRunnerCore
import JobRunnerPluginAPI
import JobRunnerTesting
import Testing

@testable import JobRunnerPluginHost

/// The host writes plugin requests with its own JSON writer, and plugins decode them with
/// `JSONDecoder` as `PluginRequest`; these hold the two together, field by field.
@Suite struct PluginRequestEncodingTests {
    /// Text that a writer of JSON strings can get wrong.
    static let awkward = [
        "", "plain", "quote \" and back\\slash", "\\\"\\\\\"", "new\nline\r\ttab\u{8}\u{C}",
        "\u{0}nul inside", "\u{1}\u{1F} control, \u{7F} delete", "é precomposed", "e\u{301} combining",
        "Z\u{351}\u{36B}\u{343}\u{36A}\u{302} stacked", "👩‍👩‍👧‍👦 🇸🇪 🚀 emoji", "漢字 ﷽", "\u{2028}\u{2029} separators",
        "\u{FEFF}bom", "\u{10FFFF} last scalar", "/a/b\\c", "</script>", "{\"not\": \"an object\"}",
    ]

    /// A request with every member set, its text from `text`.
    static func request(_ text: String) -> PluginRequest<JSONValue> {
        PluginRequest(
            handler: text, job: text, run: "run-" + text, attempt: 3,
            parameters: .object([
                text: .string(text), "list": .array([.string(text), .int(1), .bool(false), .null]),
                "nested": .object(["deeper": .object([text: .array([])]), "empty": .object([:])]),
            ]),
            needs: [text: [text: text, "other": "x"], "b": [:]], log: "/logs/" + text, workdir: text,
            notify: PluginNotification(
                run: "run-" + text, state: text, job: text, failed: [text, "b"], summary: "/s/" + text))
    }

    @Test(arguments: awkward) func everyMemberDecodesAsWritten(text: String) throws {
        let request = Self.request(text)
        let fields = StoredFields(of: request)
        #expect(fields.unset.isEmpty, "the fixture leaves \(fields.unset) unset: set it, so it is tested")

        let bytes = request.jsonBytes
        let decoded = try JSONDecoder().decode(PluginRequest<JSONValue>.self, from: Data(bytes))
        #expect(decoded == request)
        // String equality is canonical equivalence ("é" == "e\u{301}"); the same bytes again mean
        // the very same scalars came back.
        #expect(decoded.jsonBytes == bytes)
        #expect(try Set(members(bytes)) == Set(fields.names))
        let encoded = try JSONEncoder().encode(request)
        #expect(try JSONDecoder().decode(PluginRequest<JSONValue>.self, from: encoded).jsonBytes == bytes)
    }

    /// Numbers a JSON writer can get wrong: Int64's extremes, doubles at the edges of their range
    /// and precision.
    static let numbers: [JSONValue] = [
        .int(0), .int(-1), .int(Int(Int64.max)), .int(Int(Int64.min)), .int(1 << 53 + 1),
        .double(0.1), .double(-2.5), .double(1.0 / 3), .double(123_456_789.123_456_78), .double(1e-300),
        .double(.leastNonzeroMagnitude), .double(.leastNormalMagnitude), .double(.greatestFiniteMagnitude),
        .double(-.greatestFiniteMagnitude), .double(1e300),
    ]

    @Test(arguments: numbers) func numbersDecodeAsWritten(number: JSONValue) throws {
        var request = Self.request("n")
        request.attempt = Int(Int64.max)
        request.parameters = .object(["n": number, "list": .array([number, number])])
        let bytes = request.jsonBytes
        #expect(try JSONDecoder().decode(PluginRequest<JSONValue>.self, from: Data(bytes)) == request)
    }

    /// A whole double (`1.0`) reads back as an int: that is `JSONValue`'s decoding, and the
    /// writer's bytes read back exactly as `JSONEncoder`'s do.
    @Test(arguments: [1.0, -0.0, 0.0, 1e15, -4096.0, 9_007_199_254_740_992.0])
    func wholeDoublesDecodeAsJSONEncodersDo(number: Double) throws {
        var request = Self.request("n")
        request.parameters = .object(["n": .double(number)])
        let written = try JSONDecoder().decode(PluginRequest<JSONValue>.self, from: Data(request.jsonBytes))
        let encoded = try JSONDecoder().decode(
            PluginRequest<JSONValue>.self, from: JSONEncoder().encode(request))
        #expect(written == encoded)
    }

    /// What a plugin author's `Parameters` type sees.
    struct Typed: Decodable, Equatable {
        var name: String
        var big: Int64
        var small: Int64
        var ratio: Double
        var tiny: Double
        var flags: [Bool]
        var missing: String?
        var nested: [String: [Int32]]
    }

    @Test(arguments: awkward) func aPluginsOwnParametersDecode(text: String) throws {
        var request = Self.request(text)
        request.parameters = .object([
            "name": .string(text), "big": .int(Int(Int64.max)), "small": .int(Int(Int64.min)),
            "ratio": .double(0.1), "tiny": .double(.leastNonzeroMagnitude),
            "flags": .array([.bool(true), .bool(false)]),
            "nested": .object([text: .array([.int(Int(Int32.min)), .int(Int(Int32.max))])]),
        ])
        let decoded = try JSONDecoder().decode(PluginRequest<Typed>.self, from: Data(request.jsonBytes))
        let expected = Typed(
            name: text, big: .max, small: .min, ratio: 0.1, tiny: .leastNonzeroMagnitude,
            flags: [true, false], missing: nil,
            nested: [text: [.min, .max]])
        #expect(decoded.parameters == expected)
        #expect(decoded.parameters.name.unicodeScalars.elementsEqual(text.unicodeScalars))
        #expect(decoded.handler == request.handler && decoded.needs == request.needs)
    }

    @Test func anAbsentLogIsLeftOutAsJSONEncoderLeavesItOut() throws {
        var request = Self.request("x")
        request.log = nil
        let bytes = request.jsonBytes
        #expect(try !members(bytes).contains("log"))
        #expect(try JSONDecoder().decode(PluginRequest<JSONValue>.self, from: Data(bytes)) == request)
    }

    @Test func anAttemptBecomesItsRequest() {
        let job = JobDefinition(
            id: "refresh-user", handler: .plugin(plugin: "users", handler: "refresh"),
            parameters: ["user": .string("alice"), "n": .int(2)], workingDirectory: "/work/jobs")
        let attempt = AttemptRequest(
            runID: "20260101-000000-abcd", job: job, attempt: 2, logPath: "/state/logs/refresh-user.2.log",
            workDirectory: "/state/runs/x", neededOutputs: ["token": ["value": "t"]])
        let request = PluginRequest(attempt: attempt, handler: "refresh")
        #expect(
            request
                == PluginRequest(
                    handler: "refresh", job: "refresh-user", run: "20260101-000000-abcd", attempt: 2,
                    parameters: .object(["user": .string("alice"), "n": .int(2)]),
                    needs: ["token": ["value": "t"]], log: "/state/logs/refresh-user.2.log",
                    workdir: "/work/jobs"))
    }

    /// The names of the members of the JSON object in `bytes`.
    private func members(_ bytes: [UInt8]) throws -> [String] {
        let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        return object.map { Array($0.keys) } ?? []
    }
}
