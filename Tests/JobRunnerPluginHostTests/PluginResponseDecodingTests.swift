import Foundation
import JobRunnerCore
import JobRunnerPluginAPI
import Testing

@testable import JobRunnerPluginHost

/// A plugin encodes its `PluginResponse` with `JSONEncoder`, the host decodes the same type and
/// turns it into the attempt's result; these check that turn for every kind of ending.
@Suite struct PluginResponseDecodingTests {
    static let messages = ["plain", "quote \" back\\slash\nline", "e\u{301} 👩‍👩‍👧‍👦 \u{0}\u{1F}"]

    /// The result a handler's ending comes to on the runner's side.
    private func result(of handlerResult: HandlerResult) throws -> AttemptResult {
        AttemptResult(pluginResponse: Array(try JSONEncoder().encode(PluginResponse(handlerResult))))
    }

    @Test(arguments: messages) func everyEndingKeepsItsWords(message: String) throws {
        let outputs = [message: message, "n": "1"]
        #expect(
            try result(of: .succeeded(outputs: outputs))
                == AttemptResult(.succeeded, outputs: outputs))
        #expect(
            try result(of: .failed(message, outputs: outputs))
                == AttemptResult(.pluginFailed(message), outputs: outputs))
        #expect(
            try result(of: .retry(after: .milliseconds(1500), message))
                == AttemptResult(.pluginRetry(message), retryAfter: .milliseconds(1500)))
        #expect(try result(of: .skipped(message)) == AttemptResult(.skipped(message)))
        #expect(try result(of: .retry()) == AttemptResult(.pluginRetry("")))
    }

    @Test func delaysThatAreNotOneAreIgnored() {
        for text in ["-1", "1e300", "1e16", "-0.5"] {
            let response = Array(#"{"status":"retry","retryAfter":\#(text)}"#.utf8)
            #expect(
                AttemptResult(pluginResponse: response) == AttemptResult(.pluginRetry("")),
                "retryAfter \(text)")
        }
        let response = Array(#"{"status":"retry","retryAfter":0.0015}"#.utf8)
        #expect(AttemptResult(pluginResponse: response).retryAfter == .milliseconds(1))
    }

    @Test func aResponseThatDoesNotDecodeFailsTheAttempt() {
        for text in ["", "not json", #"{"status":"exploded"}"#, #"{"message":"no status"}"#] {
            let result = AttemptResult(pluginResponse: Array(text.utf8))
            #expect(result.outcome == .failed)
            #expect(result.end == .refused(.responseNotJSON(text)))
            #expect(result.end.words == "plugin response is not valid JSON: \(text)")
        }
    }
}
