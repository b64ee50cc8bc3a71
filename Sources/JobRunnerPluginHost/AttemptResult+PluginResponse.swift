import Foundation
import JobRunnerCore
import JobRunnerPluginAPI

extension AttemptResult {
    /// What the runner makes of a plugin's response, decoded as the `PluginResponse` the plugin
    /// side encodes; one it cannot read fails the attempt, saying so.
    init(pluginResponse response: [UInt8]) {
        self = response.withUnsafeBytes { AttemptResult(pluginResponse: $0) }
    }

    /// The same, from the bytes where the plugin left them. A usual response is read without
    /// `JSONDecoder` (see `JSONReader`); an unusual one is decoded with it.
    init(pluginResponse response: UnsafeRawBufferPointer) {
        guard let decoded = try? PluginResponse.decode(response) else {
            let text = String(decoding: response.prefix(200), as: UTF8.self)
            self.init(.refused(.responseNotJSON(text)))
            return
        }
        let outputs = decoded.outputs ?? [:]
        let size = AttemptResult.size(of: outputs)
        guard size <= AttemptResult.outputLimit else {
            self.init(.refused(.pluginOutputsTooLarge(written: size, limit: AttemptResult.outputLimit)))
            return
        }
        let message = PluginLimits.message(decoded.message ?? "")
        switch decoded.status {
        case .succeeded:
            self.init(.succeeded, outputs: outputs)
        case .failed:
            self.init(.pluginFailed(message), outputs: outputs)
        case .retry:
            let after = decoded.retryAfter.flatMap { seconds -> Duration? in
                // Negative, not a number, or more milliseconds than Int64 holds (converting
                // those would trap): not a delay, so the backoff applies.
                guard seconds >= 0, let milliseconds = Int64(exactly: (seconds * 1000).rounded(.down)) else {
                    return nil
                }
                return .milliseconds(milliseconds)
            }
            // Like a shell job's exit 75 (EX_TEMPFAIL): retried whatever `retry.on` says.
            self.init(.pluginRetry(message), outputs: outputs, retryAfter: after)
        case .skipped:
            self.init(.skipped(message), outputs: outputs)
        }
    }
}
