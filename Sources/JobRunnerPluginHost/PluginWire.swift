import Foundation
import JobRunnerCore
import JobRunnerPluginAPI

/// The JSON of the plugin ABI, from the runner's side: requests from attempts, results from
/// responses. The isolated child speaks the same bytes.
public enum PluginWire {
    /// The request for one attempt of a plugin job: the members of `PluginRequest`, in key
    /// order, written directly (`JSONEncoder` cost more than the call on no-op handlers).
    public static func request(for attempt: AttemptRequest, handler: String) -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writer.beginObject()
        writer.member("attempt", attempt.attempt)
        writer.member("handler", handler)
        writer.member("job", attempt.job.id)
        writer.member("log", attempt.logPath)
        writer.key("needs")
        writer.beginObject()
        for job in attempt.neededOutputs.keys.sorted() {
            writer.member(job, attempt.neededOutputs[job] ?? [:])
        }
        writer.endObject()
        writer.member("parameters", JSONValue.object(attempt.job.parameters))
        writer.member("run", attempt.runID)
        writer.member("workdir", attempt.job.workingDirectory)
        writer.endObject()
        return writer.bytes
    }

    /// What the runner makes of a response; one it cannot read fails the attempt, saying so.
    public static func result(from response: [UInt8]) -> AttemptResult {
        guard let decoded = try? JSONDecoder().decode(PluginResponse.self, from: Data(response)) else {
            let text = String(decoding: response.prefix(200), as: UTF8.self)
            return AttemptResult(outcome: .failed, reason: "plugin response is not valid JSON: \(text)")
        }
        let outputs = decoded.outputs ?? [:]
        switch decoded.status {
        case .succeeded:
            return AttemptResult(outcome: .succeeded, outputs: outputs)
        case .failed:
            return AttemptResult(outcome: .failed, reason: decoded.message ?? "failed", outputs: outputs)
        case .retry:
            let after = decoded.retryAfter.flatMap {
                $0 >= 0 && $0.isFinite ? Duration.milliseconds(Int64($0 * 1000)) : nil
            }
            // Like a shell job's exit 75 (EX_TEMPFAIL): retried whatever `retry.on` says.
            return AttemptResult(
                outcome: .tempfail, reason: decoded.message.flatMap { $0.isEmpty ? nil : $0 } ?? "retry",
                outputs: outputs, retryAfter: after)
        case .skipped:
            return AttemptResult(
                outcome: .skipped, reason: decoded.message ?? "skipped by the plugin", outputs: outputs)
        }
    }
}
