extension JobRecord {
    /// How many attempts a job had against its `retry.attempts`, as `status`, the pages and the
    /// report say it: `2 attempts of 3`; once some did not count (an operator's retry gives a
    /// fresh budget, a stop by an operator or a clean stop is not the job's failure), which of
    /// them did: `2 attempts, 1 of 1 counted`. Without a limit: `2 attempts`.
    public var attemptsWords: String {
        let attempts = "\(self.attempts) attempt\(self.attempts == 1 ? "" : "s")"
        guard let maxAttempts else { return attempts }
        return uncountedAttempts > 0
            ? "\(attempts), \(countedAttempts) of \(maxAttempts) counted" : "\(attempts) of \(maxAttempts)"
    }

    /// The attempt a backoff waits for: `attempt 3 of 5`, or `attempt 3, 2 of 5 counted` once
    /// some did not count.
    public var nextAttemptWords: String {
        guard let maxAttempts else { return "attempt \(attempts + 1)" }
        return uncountedAttempts > 0
            ? "attempt \(attempts + 1), \(countedAttempts + 1) of \(maxAttempts) counted"
            : "attempt \(attempts + 1) of \(maxAttempts)"
    }
}
