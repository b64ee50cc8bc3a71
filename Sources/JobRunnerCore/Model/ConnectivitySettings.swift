/// The `connectivity:` block of the job files (SPEC 5.5).
public struct ConnectivitySettings: Sendable, Hashable {
    /// A shell command whose exit 0 means online; nil: the built-in check that sends no traffic.
    public var probe: String?
    /// Where the probe runs: the directory of the file that declares it.
    public var workingDirectory: String?
    /// How often connectivity is checked.
    public var interval: Duration

    public init(probe: String? = nil, workingDirectory: String? = nil, interval: Duration = .seconds(10)) {
        self.probe = probe
        self.workingDirectory = workingDirectory
        self.interval = interval
    }
}

/// Answers "is the machine online?" for `requiresInternet` jobs and pipelines.
public protocol ConnectivityProbe: Sendable {
    func isOnline() async -> Bool
}
