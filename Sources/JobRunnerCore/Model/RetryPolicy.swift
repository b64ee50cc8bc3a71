import Foundation

/// How often a job is attempted and how long it waits between attempts (SPEC 5.4).
public struct RetryPolicy: Sendable, Hashable {
    /// How the delay grows from one attempt to the next.
    public enum Backoff: String, Sendable, Hashable, CaseIterable {
        case exponential, fixed, none
    }

    /// Total attempts, the first included; nil means unlimited.
    public var attempts: Int?
    public var backoff: Backoff
    public var delay: Duration
    public var factor: Double
    public var maxDelay: Duration
    /// Each delay is multiplied by a random factor in [1 - jitter, 1 + jitter].
    public var jitter: Double
    /// Exit codes that are retried; nil retries any failure. Exit 75 always retries.
    public var retryOn: Set<Int32>?
    /// No new attempt starts after this much time since the first one.
    public var maxElapsed: Duration?

    public init(
        attempts: Int? = 1,
        backoff: Backoff = .exponential,
        delay: Duration = .seconds(1),
        factor: Double = 2,
        maxDelay: Duration = .seconds(300),
        jitter: Double = 0.1,
        retryOn: Set<Int32>? = nil,
        maxElapsed: Duration? = nil
    ) {
        self.attempts = attempts
        self.backoff = backoff
        self.delay = delay
        self.factor = factor
        self.maxDelay = maxDelay
        self.jitter = jitter
        self.retryOn = retryOn
        self.maxElapsed = maxElapsed
    }

    /// The exit code that always means "try again later" (EX_TEMPFAIL).
    public static let tempFailExitCode: Int32 = 75

    /// The delay before attempt `attempt + 1`, after `attempt` (≥ 1) attempts have been made.
    /// - Parameter random: a source of numbers in [0, 1), injected so tests are exact.
    public func delay(afterAttempt attempt: Int, random: inout some RandomSource) -> Duration {
        let base: Double
        switch backoff {
        case .none: return .zero
        case .fixed: base = delay.seconds
        case .exponential:
            let grown = delay.seconds * pow(factor, Double(max(0, attempt - 1)))
            base = min(grown, maxDelay.seconds)
        }
        let spread = jitter > 0 ? 1 - jitter + 2 * jitter * random.nextUnit() : 1
        let seconds = max(0, base * spread)
        return .milliseconds(Int64((min(seconds, 1e10) * 1000).rounded()))
    }

    /// Whether a failed attempt may be followed by another.
    /// - Parameters:
    ///   - countedAttempts: attempts made so far that count against the budget.
    ///   - exitCode: the failed attempt's exit code, nil when it did not exit on its own.
    public func allowsAnotherAttempt(countedAttempts: Int, exitCode: Int32?) -> Bool {
        if let attempts, countedAttempts >= attempts { return false }
        guard let retryOn else { return true }
        guard let exitCode else { return false }
        return exitCode == Self.tempFailExitCode || retryOn.contains(exitCode)
    }
}

/// What follows a failed attempt: another one at a date, or none.
public enum RetryDecision: Sendable, Hashable {
    /// Another attempt after `delay`.
    case retry(after: Duration)
    /// No more attempts: the job has failed.
    case giveUp
}

extension RetryPolicy {
    /// Decides what follows a failed attempt, in one place: the attempt budget and `retry.on`,
    /// then the delay (a handler's `retry-after` replaces the backoff), then `maxElapsed`.
    /// - Parameters:
    ///   - countedAttempts: attempts made so far that count against the budget.
    ///   - exitCode: what `retry.on` judges; nil when the attempt did not exit on its own.
    ///   - retryAfter: a delay the handler asked for (`retry-after=`), instead of the backoff.
    ///   - firstStartedAt: when the job's first attempt started, for `maxElapsed`.
    ///   - now: when the attempt failed.
    ///   - random: jitter's source.
    public func decide(
        countedAttempts: Int, exitCode: Int32?, retryAfter: Duration?, firstStartedAt: Date?, now: Date,
        random: inout some RandomSource
    ) -> RetryDecision {
        guard allowsAnotherAttempt(countedAttempts: countedAttempts, exitCode: exitCode) else {
            return .giveUp
        }
        let delay = retryAfter ?? self.delay(afterAttempt: countedAttempts, random: &random)
        if let maxElapsed, let firstStartedAt,
            now.addingTimeInterval(delay.seconds).timeIntervalSince(firstStartedAt) > maxElapsed.seconds
        {
            return .giveUp
        }
        return .retry(after: delay)
    }
}

private func pow(_ base: Double, _ exponent: Double) -> Double {
    var result = 1.0
    var remaining = Int(exponent)
    while remaining > 0 && result < 1e12 {
        result *= base
        remaining -= 1
    }
    return result
}
