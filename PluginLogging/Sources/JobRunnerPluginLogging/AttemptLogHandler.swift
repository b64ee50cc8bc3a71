public import JobRunnerPluginAPI
public import Logging

extension HandlerContext {
    /// The attempt's log through swift-log: `logger.info("…")` writes `info: …`, metadata after
    /// it, where `jobrunner logs JOB` shows it (the product `JobRunnerPluginLogging`).
    public var logger: Logger {
        Logger(label: "jobrunner.plugin") { _ in AttemptLogHandler(log: log) }
    }
}

/// A swift-log handler whose lines go to an attempt's log: `context.logger.info("…")` writes
/// `info: …` (with any metadata as `key=value` after it) where `jobrunner logs JOB` shows it.
public struct AttemptLogHandler: LogHandler {
    let log: AttemptLog
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]

    public init(log: AttemptLog) {
        self.log = log
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let all = event.metadata.map { metadata.merging($0) { $1 } } ?? metadata
        var words = [event.level.rawValue + ": " + event.message.description]
        if let error = event.error { words.append("error=\(error)") }
        words += all.keys.sorted().map { key in "\(key)=\(all[key].map { "\($0)" } ?? "")" }
        log(words.joined(separator: " "))
    }
}
