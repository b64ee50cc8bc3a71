/// When the runner hands what it decided to the store: at once, or a moment later so that one
/// commit (one fsync) carries more.
///
/// A commit makes every decision in it durable before anything of them is reported or acted
/// on; only the moment of the commit is paced, never that guarantee. Two rules:
/// - While a commit is under way, new decisions wait for it: the store commits one batch at a
///   time anyway, and what gathers meanwhile goes in the next batch together.
/// - When the attempts the last commit started usually end sooner than a commit takes (fast
///   plugin calls), the next commit also waits for them, at most about one commit's time.
///   Otherwise each lane of a pipeline would leave every other commit to the lanes beside it:
///   a job ending while a commit is under way misses it, and its dependent starts a commit
///   later. Slow attempts (a shell command, anything longer than a commit) are not waited for.
///
/// The measures are of real time (a monotonic clock), not the runner's clock: they decide how
/// state is batched, never what is decided.
public struct CommitPacing: Sendable {
    public enum Policy: Sendable, Hashable {
        /// Waits for fresh attempts when they usually end sooner than a commit takes.
        case adaptive
        /// Always waits for fresh attempts, for at most `window` (tests: a batching that
        /// does not depend on the machine's speed).
        case always(window: Duration)
        /// Never waits for fresh attempts.
        case never
    }

    public let policy: Policy
    /// Moving averages, in seconds, of a commit (submission to durable) and of an attempt
    /// (start to end); nil until one was seen.
    public private(set) var commitSeconds: Double?
    public private(set) var attemptSeconds: Double?

    /// How much a new measure moves an average.
    static let weight = 0.1
    /// The longest wait for fresh attempts, whatever a commit takes.
    static let longestWait: Duration = .milliseconds(20)

    public init(_ policy: Policy = .adaptive) { self.policy = policy }

    public mutating func committed(in duration: Duration) {
        commitSeconds = Self.average(commitSeconds, duration.seconds)
    }

    public mutating func attemptEnded(after duration: Duration) {
        attemptSeconds = Self.average(attemptSeconds, duration.seconds)
    }

    /// How long the next commit waits for the attempts the last one started, or nil when it
    /// does not wait for them.
    public var waitForFreshAttempts: Duration? {
        switch policy {
        case .never:
            return nil
        case .always(let window):
            return window
        case .adaptive:
            guard let commitSeconds, let attemptSeconds, attemptSeconds < commitSeconds else { return nil }
            return min(.seconds(commitSeconds), Self.longestWait)
        }
    }

    private static func average(_ old: Double?, _ new: Double) -> Double {
        guard let old else { return new }
        return old + weight * (new - old)
    }
}
