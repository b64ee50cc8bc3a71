import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerPluginAPI
@testable import JobRunnerPluginHost

/// Responses are written by the plugin side's own writer and read by `JSONReader` on the host,
/// with `JSONDecoder` behind it for anything unusual: the quick reader must read every response
/// a plugin writes (Swift or C) as `JSONDecoder` does, and give up on anything else.
@Suite struct PluginResponseReaderTests {
    static let awkward = PluginRequestEncodingTests.awkward

    /// What the quick reader makes of `text`, nil when it gives up.
    static func quick(_ bytes: [UInt8]) -> PluginResponse? {
        bytes.withUnsafeBytes { PluginResponse(quickJSON: $0) }
    }

    static func decoded(_ bytes: [UInt8]) -> PluginResponse? {
        try? JSONDecoder().decode(PluginResponse.self, from: Data(bytes))
    }

    /// The rule the reader lives by: it gives up, or it reads what `JSONDecoder` reads.
    static func expectAgreement(_ bytes: [UInt8], sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        guard let quick = quick(bytes) else { return }
        #expect(
            quick == decoded(bytes), "quick reader and JSONDecoder differ on \(Array(bytes))",
            sourceLocation: sourceLocation)
    }

    static func responses(_ text: String) -> [PluginResponse] {
        let outputs = ["n": "1", "": ""].merging([text: text]) { _, new in new }
        return [
            PluginResponse(status: .succeeded),
            PluginResponse(status: .succeeded, outputs: outputs),
            PluginResponse(status: .failed, message: text, outputs: ["k": text]),
            PluginResponse(status: .retry, message: text, retryAfter: 1.5),
            PluginResponse(status: .retry, retryAfter: 0),
            PluginResponse(status: .retry, retryAfter: 1e-7),
            PluginResponse(status: .retry, retryAfter: 86_400 * 365),
            PluginResponse(status: .skipped, message: text),
            PluginResponse(status: .succeeded, outputs: [:]),
        ]
    }

    @Test(arguments: awkward) func whatThePluginSideWritesReadsBackQuickly(text: String) throws {
        for response in Self.responses(text) {
            let bytes = try #require(response.jsonBytes)
            #expect(Self.quick(bytes) == response)
            #expect(Self.decoded(bytes) == response)
            // The very same scalars, not only canonically equivalent text.
            #expect(Self.quick(bytes)?.message?.unicodeScalars.elementsEqual(text.unicodeScalars) ?? true)
        }
    }

    @Test(arguments: awkward) func whatJSONEncoderWritesReadsQuicklyAsItDecodes(text: String) throws {
        // JSONEncoder escapes "/" as "\/": escapes the writer never makes.
        for response in Self.responses(text + "/a/b") {
            let bytes = Array(try JSONEncoder().encode(response))
            #expect(Self.quick(bytes) == response)
        }
    }

    @Test func aRetryAfterJSONCannotHoldIsNotWritten() {
        #expect(PluginResponse(status: .retry, retryAfter: .infinity).jsonBytes == nil)
        #expect(PluginResponse(status: .retry, retryAfter: .nan).jsonBytes == nil)
    }

    /// Responses a C plugin may write by hand: whitespace anywhere, members in any order,
    /// escapes, members jobrunner does not know, numbers in every form JSON allows.
    static let handWritten: [(String, PluginResponse)] = [
        (#"{"status":"succeeded"}"#, PluginResponse(status: .succeeded)),
        (
            " \n\t{\r\n \"status\" :\t\"succeeded\" , \"outputs\" : { } }\n ",
            PluginResponse(status: .succeeded, outputs: [:])
        ),
        (
            #"{"outputs":{"b":"2","a":"1"},"status":"succeeded"}"#,
            PluginResponse(status: .succeeded, outputs: ["a": "1", "b": "2"])
        ),
        (
            #"{"status":"failed","message":"caf\u00e9 \ud83d\ude80 \"q\" \\ \/ \b\f\n\r\t \u0000"}"#,
            PluginResponse(status: .failed, message: "café 🚀 \"q\" \\ / \u{8}\u{C}\n\r\t \u{0}")
        ),
        (#"{"status":"failed","message":"\u00E9\u00e9"}"#, PluginResponse(status: .failed, message: "éé")),
        (
            "{\"status\":\"failed\",\"message\":\"raw UTF-8: é 漢字 👩‍👩‍👧‍👦\"}",
            PluginResponse(status: .failed, message: "raw UTF-8: é 漢字 👩‍👩‍👧‍👦")
        ),
        (
            #"{"status":"failed","message":null,"outputs":null,"retryAfter":null}"#,
            PluginResponse(status: .failed)
        ),
        (#"{"status":"retry","retryAfter":30}"#, PluginResponse(status: .retry, retryAfter: 30)),
        (#"{"status":"retry","retryAfter":-0}"#, PluginResponse(status: .retry, retryAfter: 0)),
        (#"{"status":"retry","retryAfter":1E3}"#, PluginResponse(status: .retry, retryAfter: 1000)),
        (#"{"status":"retry","retryAfter":0.5e-1}"#, PluginResponse(status: .retry, retryAfter: 0.05)),
        (#"{"status":"retry","retryAfter":2.5E+2}"#, PluginResponse(status: .retry, retryAfter: 250)),
        (#"{"status":"retry","retryAfter":-1.5}"#, PluginResponse(status: .retry, retryAfter: -1.5)),
        (
            #"{"status":"retry","retryAfter":0.1000000000000000055511151231257827}"#,
            PluginResponse(status: .retry, retryAfter: 0.1)
        ),
        (
            #"{"version":2,"extra":{"a":[1,2.5,-3e2,true,false,null,{"b":"c\"}"}],"d":{}},"list":[],"status":"skipped","message":"m"}"#,
            PluginResponse(status: .skipped, message: "m")
        ),
    ]

    @Test func handWrittenResponsesReadQuicklyAsJSONDecoderReadsThem() throws {
        for (text, expected) in Self.handWritten {
            let bytes = Array(text.utf8)
            #expect(Self.quick(bytes) == expected, "\(text)")
            #expect(Self.decoded(bytes) == expected, "\(text)")
        }
    }

    /// Valid but unusual: the quick reader gives up and `JSONDecoder` decides, as before.
    static let unusual = [
        #"{"st\u0061tus":"succeeded"}"#, #"{"status":"succeeded","status":"failed"}"#,
        #"{"status":"succeeded","outputs":{"a":"1","a":"2"}}"#, #"{"status":"succeeded","x":1,"x":2}"#,
        // JSONDecoder accepts a comma before a closing bracket, refuses `0e3`; this reader gives up.
        #"{"status":"retry","retryAfter":0E3}"#, #"{"status":"retry","retryAfter":-0e1}"#,
        #"{"status":"succeeded",}"#, #"{"status":"succeeded","x":[1,]}"#,
        "{\"status\":\"succeeded\",\"é\":1}",
        #"{"status":"failed","message":"lone \ud800 surrogate"}"#, #"{"status":"retry","retryAfter":1e400}"#,
        #"{"status":"retry","retryAfter":"5"}"#, #"{"status":"succeeded","outputs":{"n":1}}"#,
        "\u{FEFF}{\"status\":\"succeeded\"}",
        "{\"status\":\"succeeded\",\"deep\":" + String(repeating: "[", count: 100)
            + String(repeating: "]", count: 100) + "}",
    ]

    @Test(arguments: unusual) func unusualResponsesAreLeftToJSONDecoder(text: String) {
        #expect(Self.quick(Array(text.utf8)) == nil)
        let result = AttemptResult(pluginResponse: Array(text.utf8))
        switch Self.decoded(Array(text.utf8)) {
        case .some: #expect(result.end != .refused(.responseNotJSON(text)))
        case .none:
            #expect(
                result
                    == AttemptResult(.refused(.responseNotJSON(text))))
        }
    }

    /// Not JSON, or not a response: the attempt fails with the same words as before.
    static let malformed = [
        "", " ", "{", "}", "[]", "null", "\"succeeded\"", #"{"status":"succeeded"} x"#,
        #"{"status":"succeeded"}}"#,
        #"{"status":"succeeded" "message":"m"}"#, #"{status:"succeeded"}"#,
        #"{'status':'succeeded'}"#, #"{"status":"exploded"}"#, #"{"message":"no status"}"#,
        #"{"status":null}"#,
        #"{"status":"retry","retryAfter":01}"#, #"{"status":"retry","retryAfter":1.}"#,
        #"{"status":"retry","retryAfter":.5}"#, #"{"status":"retry","retryAfter":+1}"#,
        #"{"status":"retry","retryAfter":NaN}"#, #"{"status":"retry","retryAfter":Infinity}"#,
        #"{"status":"retry","retryAfter":1e}"#, #"{"status":"retry","retryAfter":-}"#,
        "{\"status\":\"failed\",\"message\":\"raw\ttab\"}",
        "{\"status\":\"failed\",\"message\":\"raw\nline\"}",
        #"{"status":"failed","message":"bad \x escape"}"#, #"{"status":"failed","message":"short \u12"}"#,
        #"{"status":"failed","message":"unterminated}"#, #"{"status":"succeeded","outputs":{"a":null}}"#,
        #"{"status":"succeeded","outputs":["a"]}"#, #"{"status":"succeeded","x":[1,,]}"#,
        #"{"status":"succeeded","x":tru}"#, #"{"status":"succeeded","x":nul}"#,
    ]

    @Test(arguments: malformed) func malformedResponsesFailTheAttemptAsBefore(text: String) {
        #expect(Self.quick(Array(text.utf8)) == nil)
        #expect(Self.decoded(Array(text.utf8)) == nil)
        #expect(
            AttemptResult(pluginResponse: Array(text.utf8))
                == AttemptResult(.refused(.responseNotJSON(text))))
    }

    @Test func invalidUTF8IsLeftToJSONDecoder() {
        for bytes: [UInt8] in [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC0, 0xAF]] {
            let response = Array(#"{"status":"failed","message":""#.utf8) + bytes + Array(#""}"#.utf8)
            #expect(Self.quick(response) == nil)
            Self.expectAgreement(response)
        }
    }

    /// Every byte of valid responses changed, dropped or doubled, deterministically: the reader
    /// gives up or agrees with `JSONDecoder`, never reads something else.
    @Test func damagedResponsesAreReadAsJSONDecoderReadsThemOrNotAtAll() throws {
        var documents = Self.handWritten.map { Array($0.0.utf8) }
        documents += try Self.responses("a\"é/\u{1}").map { try #require($0.jsonBytes) }
        let replacements = Array(#" "\{}[]:,.-+eE0159aunlstr"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xFF]
        for document in documents {
            for index in document.indices {
                var dropped = document
                dropped.remove(at: index)
                Self.expectAgreement(dropped)
                var doubled = document
                doubled.insert(document[index], at: index)
                Self.expectAgreement(doubled)
                for replacement in replacements where replacement != document[index] {
                    var changed = document
                    changed[index] = replacement
                    Self.expectAgreement(changed)
                }
            }
        }
    }
}
