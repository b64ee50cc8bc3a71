import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerPluginAPI
@testable import JobRunnerPluginHost

/// A plugin reads its request's members with `JSONReader` and its parameters with
/// `JSONDecoder` (not at all when it takes none); anything else, and `JSONDecoder` decodes the
/// whole request as it always did, errors included.
@Suite struct PluginRequestReaderTests {
    static func decode<Parameters: Decodable>(_ type: Parameters.Type, _ bytes: [UInt8]) throws
        -> PluginRequest<Parameters>
    {
        try bytes.withUnsafeBytes { try PluginRequest<Parameters>.decode($0) }
    }

    static func envelope(_ bytes: [UInt8]) -> RequestEnvelope? {
        bytes.withUnsafeBytes { RequestEnvelope(quickJSON: $0) }
    }

    @Test(arguments: PluginRequestEncodingTests.awkward) func whatTheHostWritesIsReadQuickly(text: String)
        throws
    {
        // A job's request, the quick way's case: a hook's (with `notify`) is left to JSONDecoder.
        var request = PluginRequestEncodingTests.request(text)
        request.notify = nil
        let bytes = request.jsonBytes
        #expect(Self.envelope(bytes) != nil)
        let decoded = try Self.decode(JSONValue.self, bytes)
        #expect(decoded == request)
        #expect(decoded.jsonBytes == bytes)
        #expect(decoded.job.unicodeScalars.elementsEqual(text.unicodeScalars))
    }

    /// A hook's request (with `notify`) is not read the quick way, and decodes whole all the same.
    @Test func aHooksRequestDecodesWithItsNotification() throws {
        let request = PluginRequestEncodingTests.request("hook")
        let bytes = request.jsonBytes
        #expect(Self.envelope(bytes) == nil)
        let decoded = try Self.decode(JSONValue.self, bytes)
        #expect(decoded == request)
        #expect(decoded.notify?.failed == ["hook", "b"])
    }

    @Test(arguments: PluginRequestEncodingTests.awkward) func typedParametersDecodeAsBefore(text: String)
        throws
    {
        var request = PluginRequestEncodingTests.request(text)
        request.notify = nil
        request.parameters = .object([
            "name": .string(text), "big": .int(Int(Int64.max)), "small": .int(Int(Int64.min)),
            "ratio": .double(0.1), "tiny": .double(.leastNonzeroMagnitude),
            "flags": .array([.bool(true), .bool(false)]),
            "nested": .object([text: .array([.int(Int(Int32.min)), .int(Int(Int32.max))])]),
        ])
        typealias Typed = PluginRequestEncodingTests.Typed
        let bytes = request.jsonBytes
        let quick = try Self.decode(Typed.self, bytes)
        let full = try JSONDecoder().decode(PluginRequest<Typed>.self, from: Data(bytes))
        #expect(quick.parameters == full.parameters)
        #expect(quick.handler == full.handler && quick.job == full.job && quick.run == full.run)
        #expect(quick.attempt == full.attempt && quick.needs == full.needs)
        #expect(quick.log == full.log && quick.workdir == full.workdir)
    }

    @Test func aHandlerWithoutParametersIgnoresThem() throws {
        let bytes = PluginRequestEncodingTests.request("x").jsonBytes
        let request = try Self.decode(NoParameters.self, bytes)
        #expect(request.job == "x" && request.attempt == 3 && request.log == "/logs/x")
    }

    /// A request written by something other than jobrunner's writer: other order, whitespace,
    /// escapes, `log` null or absent, members jobrunner does not send.
    @Test func handWrittenRequestsReadQuickly() throws {
        let text = """
             { "workdir" : "/w" , "run":"r\\u00e9", "needs":{"a":{"k":"v\\n"},"b":{}}, "future":[1,{"x":null}],
               "parameters":{ "name":"n","big":1,"small":-1,"ratio":1e-1,"tiny":5E-324,"flags":[],
               "nested":{}}, "log":null, "attempt":7, "job":"j", "handler":"h" }
            """
        let bytes = Array(text.utf8)
        #expect(Self.envelope(bytes) != nil)
        let request = try Self.decode(PluginRequestEncodingTests.Typed.self, bytes)
        #expect(request.run == "ré" && request.attempt == 7 && request.log == nil && request.workdir == "/w")
        #expect(request.needs == ["a": ["k": "v\n"], "b": [:]])
        #expect(request.parameters.ratio == 0.1 && request.parameters.name == "n")
        let withoutLog =
            #"{"handler":"h","job":"j","run":"r","attempt":1,"parameters":{},"needs":{},"workdir":"w"}"#
        #expect(Self.envelope(Array(withoutLog.utf8))?.log == .some(nil))
    }

    /// Requests the quick way cannot or must not read: each decodes (or fails) exactly as
    /// `JSONDecoder` decodes it, with the same error.
    static let unusual = [
        "", "not json", "{}", "[]", #"{"handler":"h"}"#,
        #"{"handler":"h","job":"j","run":"r","attempt":1,"parameters":{},"needs":{}}"#,
        #"{"handler":"h","job":"j","run":"r","attempt":"1","parameters":{},"needs":{},"workdir":"w"}"#,
        #"{"handler":"h","job":"j","run":"r","attempt":1.0,"parameters":{},"needs":{},"workdir":"w"}"#,
        #"{"handler":"h","job":"j","run":"r","attempt":1,"parameters":null,"needs":{},"workdir":"w"}"#,
        #"{"handler":"h","job":"j","run":"r","attempt":1,"parameters":[],"needs":{},"workdir":"w"}"#,
        #"{"handler":"h","job":"j","run":"r","attempt":1,"parameters":{},"needs":{"a":null},"workdir":"w"}"#,
        #"{"handler":"h","job":"j","run":"r","attempt":1,"parameters":{},"needs":{},"workdir":5}"#,
        #"{"handler":"h","job":"j","run":"r","attempt":1,"parameters":{},"needs":{},"workdir":"w"} trailing"#,
        #"{"handler":"h","job":"j","job":"k","run":"r","attempt":1,"parameters":{},"needs":{},"workdir":"w"}"#,
        #"{"h\u0061ndler":"h","job":"j","run":"r","attempt":1,"parameters":{},"needs":{},"workdir":"w"}"#,
        #"{"handler":"h","job":"j","run":"r","attempt":1,"parameters":{"name":5},"needs":{},"workdir":"w"}"#,
        #"{"handler":"h","job":"j","run":"r","attempt":1,"parameters":{"name":"n"},"needs":{},"workdir":"w"}"#,
    ]

    @Test(arguments: unusual) func unusualRequestsDecodeAsJSONDecoderDecodesThem(text: String) {
        typealias Typed = PluginRequestEncodingTests.Typed
        let bytes = Array(text.utf8)
        for type in [NoParameters.self, Typed.self, JSONValue.self] as [any Decodable.Type] {
            func compare<Parameters: Decodable>(_: Parameters.Type) {
                let quick = Result { try Self.decode(Parameters.self, bytes) }
                let full = Result {
                    try JSONDecoder().decode(PluginRequest<Parameters>.self, from: Data(bytes))
                }
                switch (quick, full) {
                case (.success, .success): break
                case (.failure(let quick), .failure(let full)):
                    #expect(describe(quick) == describe(full), "\(text) as \(Parameters.self)")
                default:
                    Issue.record("\(text) as \(Parameters.self): quick \(quick), JSONDecoder \(full)")
                }
            }
            compare(type)
        }
    }

    /// The words a plugin answers a bad request with, through the C ABI, are those of
    /// `JSONDecoder`'s error, naming the member.
    @Test func aBadRequestIsAnsweredThroughTheABIAsBefore() throws {
        let descriptor = Plugin.export(
            name: "reader-tests", version: "1", handlers: [Named.self]
        ).assumingMemoryBound(to: jobrunner_plugin_descriptor.self).pointee
        let invoke = try #require(descriptor.invoke)
        func call(_ request: String) -> String {
            var length = 0
            let bytes = Array(request.utf8)
            let response = bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    invoke(descriptor.context, "named", $0.baseAddress, $0.count, &length)
                }
            }
            guard let response else { return "NULL" }
            defer { descriptor.free_response?(descriptor.context, response) }
            return String(decoding: UnsafeRawBufferPointer(start: response, count: length), as: UTF8.self)
        }
        let good =
            #"{"handler":"named","job":"j","run":"r","attempt":2,"parameters":{"name":"a\"/b"},"needs":{},"workdir":"w"}"#
        #expect(call(good) == #"{"status":"succeeded","outputs":{"hello":"a\"/b","job":"j"}}"#)
        let missing =
            #"{"handler":"named","job":"j","run":"r","attempt":2,"parameters":{},"needs":{},"workdir":"w"}"#
        let expected = Result {
            try JSONDecoder().decode(PluginRequest<Named.Parameters>.self, from: Data(missing.utf8))
        }
        guard case .failure(let error) = expected else {
            Issue.record("JSONDecoder decoded a request without the parameter")
            return
        }
        let answer = try JSONDecoder().decode(PluginResponse.self, from: Data(call(missing).utf8))
        #expect(answer == PluginResponse(status: .failed, message: "bad request: \(describe(error))"))
        #expect(answer.message?.contains("'parameters.name'") == true)
    }

    struct Named: PluginHandler {
        struct Parameters: Decodable, Sendable { var name: String }
        static let name = "named"

        func run(_ context: HandlerContext<Parameters>) async throws -> HandlerResult {
            .succeeded(outputs: ["hello": context.parameters.name, "job": context.jobID])
        }
    }
}

extension PluginRequestReaderTests {
    /// Every byte of two requests changed, dropped or doubled, deterministically: each decodes
    /// as `JSONDecoder` decodes it, or fails with its words.
    @Test func damagedRequestsDecodeAsJSONDecoderDecodesThem() {
        let documents = [
            #"{"attempt":1,"handler":"h","job":"j","log":"/l","needs":{"a":{"k":"v"}},"parameters":{"x":[1.5,true,null,"s"]},"run":"r","workdir":"w"}"#,
            " {\"handler\":\"h\\u00e9\", \"job\":\"j\",\"run\":\"r\",\"attempt\":12,\"parameters\":{},\"needs\":{},\"log\":null,\"workdir\":\"é\"} ",
        ]
        let replacements = Array(#" "\{}[]:,.-+eE019aunlt"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xFF]
        for document in documents.map({ Array($0.utf8) }) {
            var damaged: [[UInt8]] = []
            for index in document.indices {
                var dropped = document
                dropped.remove(at: index)
                damaged.append(dropped)
                var doubled = document
                doubled.insert(document[index], at: index)
                damaged.append(doubled)
                for replacement in replacements where replacement != document[index] {
                    var changed = document
                    changed[index] = replacement
                    damaged.append(changed)
                }
            }
            for bytes in damaged {
                let quick = Result { try Self.decode(JSONValue.self, bytes) }
                let full = Result {
                    try JSONDecoder().decode(PluginRequest<JSONValue>.self, from: Data(bytes))
                }
                switch (quick, full) {
                case (.success(let quick), .success(let full)): #expect(quick == full, "\(bytes)")
                case (.failure(let quick), .failure(let full)):
                    #expect(describe(quick) == describe(full), "\(bytes)")
                default: Issue.record("\(bytes): quick \(quick), JSONDecoder \(full)")
                }
            }
        }
    }
}
