import Foundation

/// How much history is kept (SPEC 3.1 `retention:`): finished runs beyond either limit are
/// pruned with their logs after each run or occurrence ends, and by `jobrunner prune`.
public struct RetentionPolicy: Sendable, Hashable {
    /// At most this many finished runs (one-shot runs and occurrences alike) are kept.
    public var runs: Int
    /// Finished runs older than this are pruned.
    public var age: Duration

    public static let defaultRuns = 100
    public static let defaultAge: Duration = .seconds(30 * 86_400)

    public init(runs: Int = RetentionPolicy.defaultRuns, age: Duration = RetentionPolicy.defaultAge) {
        self.runs = runs
        self.age = age
    }

    /// The runs to prune: finished ones beyond the newest `runs`, and finished ones that ended
    /// more than `age` ago. Runs that are not finished and those in `keeping` stay.
    public func runsToPrune(_ all: [RunRecord], now: Date, keeping: Set<String> = []) -> [String] {
        let finished = all.filter { $0.state.isFinal && !keeping.contains($0.id) }
            .sorted { ($0.finishedAt ?? $0.startedAt) > ($1.finishedAt ?? $1.startedAt) }
        let oldest = now.addingTimeInterval(-age.seconds)
        return finished.enumerated().compactMap { index, run in
            index >= runs || (run.finishedAt ?? run.startedAt) < oldest ? run.id : nil
        }
    }
}
