/// Every key the job file schema knows (SPEC 3), including those whose behaviour a later
/// version adds: a misspelt key is an error, never silently ignored.
enum JobFileKeys {
    static let topLevel = [
        "version", "pipelines", "constraints", "connectivity", "plugins", "defaults", "jobs", "retention",
        "secrets",
    ]
    static let job = [
        "run", "plugin", "with", "env", "workdir", "pipeline", "needs", "priority", "requiresInternet",
        "constraints", "timeout", "killGrace", "retry", "every", "cron", "catchUp", "overlap", "timezone",
        "isolation", "enabled", "matrix", "allowFailure", "when",
    ]
    static let retry = ["attempts", "backoff", "delay", "factor", "maxDelay", "jitter", "on", "maxElapsed"]
    static let pipeline = ["maxConcurrent", "order", "requiresInternet"]
    static let constraint = ["check", "satisfy", "timeout"]
    static let connectivity = ["probe", "interval"]
    static let plugins = ["paths"]
    static let retention = ["runs", "age"]
}
