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
    /// more than `age` ago. Runs that are not finished and those in `keeping` stay; a finished
    /// one in `keeping` (the current run) counts among the `runs` kept, so no more than `runs`
    /// finished runs are left.
    public func runsToPrune(_ all: [RunRecord], now: Date, keeping: Set<String> = []) -> [String] {
        runsToPrune(
            ended: all.lazy.filter { $0.state.isFinal }.map { ($0.id, $0.finishedAt ?? $0.startedAt) },
            now: now, keeping: keeping)
    }

    /// The runs to prune among finished runs given as (id, end date).
    public func runsToPrune(
        ended: some Sequence<(id: String, end: Date)>, now: Date, keeping: Set<String> = []
    ) -> [String] {
        let finished = ended.sorted { $0.end != $1.end ? $0.end > $1.end : $0.id > $1.id }
        let oldest = now.addingTimeInterval(-age.seconds)
        // The runs kept whatever their place take theirs first among the newest `runs`.
        var room = runs - finished.lazy.filter { keeping.contains($0.id) }.count
        return finished.compactMap { run in
            guard !keeping.contains(run.id) else { return nil }
            room -= 1
            return room < 0 || run.end < oldest ? run.id : nil
        }
    }
}

/// The finished runs a long-lived runner knows of, with their end dates, so that retention is
/// applied without reading every run record back: read from the store once, then kept up to
/// date from the changes the runner itself commits. It holds at most the kept runs and those
/// that ended since the last pruning.
public struct FinishedRuns: Sendable {
    private var ends: [String: Date]

    public init(_ runs: [RunRecord]) {
        ends = [:]
        for run in runs where run.state.isFinal { ends[run.id] = run.finishedAt ?? run.startedAt }
    }

    public var count: Int { ends.count }

    /// Notes the runs that `changes` finish or delete.
    public mutating func note(_ changes: [StoreChange]) {
        for change in changes {
            switch change {
            case .putRun(let run) where run.state.isFinal:
                ends[run.id] = run.finishedAt ?? run.startedAt
            case .putRun(let run):
                ends[run.id] = nil
            case .deleteRun(let id):
                ends[id] = nil
            default:
                continue
            }
        }
    }

    /// The runs `policy` prunes now; they are forgotten here (their deletion is committed next).
    public mutating func prune(_ policy: RetentionPolicy, now: Date, keeping: Set<String>) -> [String] {
        let ids = policy.runsToPrune(
            ended: ends.lazy.map { (id: $0.key, end: $0.value) }, now: now, keeping: keeping)
        for id in ids { ends[id] = nil }
        return ids
    }
}
