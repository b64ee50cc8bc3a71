import JobRunnerCore
import JobRunnerJSON
import JobRunnerPluginAPI

extension PluginRequest where Parameters == JSONValue {
    /// The request for one attempt of a plugin job.
    init(attempt: AttemptRequest, handler: String) {
        self.init(
            handler: handler, job: attempt.job.id, run: attempt.runID, attempt: attempt.attempt,
            parameters: .object(attempt.job.parameters), needs: attempt.neededOutputs, log: attempt.logPath,
            workdir: attempt.job.workingDirectory,
            notify: attempt.notification.map {
                PluginNotification(
                    run: $0.run, state: $0.state, job: $0.job, failed: $0.failed, summary: $0.summary)
            })
    }

    /// The request's JSON, as `JSONEncoder` would write it but members in key order, written
    /// directly: `JSONEncoder` cost more than the call itself on no-op handlers. The plugin side
    /// decodes these bytes as this same type (`PluginRequestEncodingTests` holds the two
    /// together); a member added to `PluginRequest` must be added here too.
    var jsonBytes: [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writer.beginObject()
        writer.member("attempt", attempt)
        writer.member("handler", handler)
        writer.member("job", job)
        writer.member("log", log)
        writer.key("needs")
        writer.beginObject()
        for neededJob in needs.keys.sorted() {
            writer.member(neededJob, needs[neededJob] ?? [:])
        }
        writer.endObject()
        if let notify {
            writer.key("notify")
            writer.beginObject()
            writer.member("failed", notify.failed)
            writer.member("job", notify.job)
            writer.member("run", notify.run)
            writer.member("state", notify.state)
            writer.member("summary", notify.summary)
            writer.endObject()
        }
        writer.member("parameters", parameters)
        writer.member("run", run)
        writer.member("workdir", workdir)
        writer.endObject()
        return writer.bytes
    }
}
