import Foundation
import Testing

@testable import JobRunnerCLI

/// The worker reads a request's handler and log without `JSONDecoder` when the plugin API's
/// strict reader is sure of them, and agrees with `JSONDecoder` whenever it does.
@Suite struct PluginWorkerEnvelopeTests {
    static let requests = [
        #"{"handler":"ok","parameters":{"a":[1,{"b":null}],"c":"d"},"needs":{},"log":"logs/r/j/1.log","attempt":1}"#,
        #"{"log":null,"handler":"ok"}"#,
        #"{"handler":"ok"}"#,
        #" { "handler" : "é \" \\ \u00e9 \ud83d\ude80" , "log" : "/a b/c.log" } "#,
        #"{"handler":"ok","log":"x","log":"y"}"#,
        #"{"handler":"ok","handler":"other"}"#,
        #"{"handler":"ok","log":7}"#,
        #"{"handler":null}"#,
        #"{"log":"x"}"#,
        #"{"handler":"ok"} trailing"#,
        #"{"handler":"ok","parameters":{"a":1,"a":2}}"#,
        #"{"\u0068andler":"ok"}"#,
        #"["handler"]"#,
        "",
    ]

    @Test(arguments: requests) func readsWhatJSONDecoderReads(text: String) {
        let bytes = Array(text.utf8)
        let decoded = try? JSONDecoder().decode(PluginWorkerCommand.Envelope.self, from: Data(bytes))
        if let direct = PluginWorkerCommand.Envelope(reading: bytes) {
            #expect(direct == decoded, "\(text)")
        }
    }

    @Test func readsTheUsualRequest() {
        let bytes = Array(Self.requests[0].utf8)
        #expect(
            PluginWorkerCommand.Envelope(reading: bytes)
                == PluginWorkerCommand.Envelope(handler: "ok", log: "logs/r/j/1.log"))
        #expect(
            PluginWorkerCommand.Envelope(reading: Array(Self.requests[1].utf8))
                == PluginWorkerCommand.Envelope(handler: "ok", log: nil))
    }
}
