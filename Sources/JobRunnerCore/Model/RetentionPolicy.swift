import Foundation

/// How much history is kept (SPEC 3.1 `retention:`): finished runs beyond either limit are
/// pruned with their logs after each run or occurrence ends, and by `jobrunner prune`.
public struct RetentionPolicy: Sendable, Hashable {
    /// At most this many finished runs are kept: of one-shot jobs, and of each periodic job's
    /// occurrences, counted apart (SPEC 5.12).
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

    /// The runs to prune, the runs of one-shot jobs and each periodic job's occurrences counted
    /// apart (SPEC 5.12), each group by its own policy (`policy("")` for one-shot runs).
    public static func runsToPrune(
        _ all: [RunRecord], now: Date, keeping: Set<String> = [], policy: (String) -> RetentionPolicy
    ) -> [String] {
        var groups: [String: [RunRecord]] = [:]
        for run in all { groups[run.occurrenceOf ?? "", default: []].append(run) }
        return groups.keys.sorted().flatMap { group in
            policy(group).runsToPrune(groups[group] ?? [], now: now, keeping: keeping)
        }
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
    /// Each run's end and its group: the periodic job it is an occurrence of, or "" for a run of
    /// one-shot jobs. Retention counts each group apart (SPEC 5.12).
    private var ends: [String: (end: Date, group: String)]

    public init(_ runs: [RunRecord]) {
        ends = [:]
        for run in runs where run.state.isFinal {
            ends[run.id] = (run.finishedAt ?? run.startedAt, run.occurrenceOf ?? "")
        }
    }

    public var count: Int { ends.count }

    /// Notes the runs that `changes` finish or delete.
    public mutating func note(_ changes: [StoreChange]) {
        for change in changes {
            switch change {
            case .putRun(let run) where run.state.isFinal:
                ends[run.id] = (run.finishedAt ?? run.startedAt, run.occurrenceOf ?? "")
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
    /// - Parameter policy: the policy of a group: `""` for the runs of one-shot jobs, else a
    ///   periodic job's id, whose occurrences are counted apart.
    public mutating func prune(
        _ policy: (String) -> RetentionPolicy, now: Date, keeping: Set<String>
    ) -> [String] {
        var groups: [String: [(id: String, end: Date)]] = [:]
        for (id, entry) in ends { groups[entry.group, default: []].append((id, entry.end)) }
        var ids: [String] = []
        for group in groups.keys.sorted() {
            ids += policy(group).runsToPrune(ended: groups[group] ?? [], now: now, keeping: keeping)
        }
        for id in ids { ends[id] = nil }
        return ids
    }

    /// The runs one policy for every group prunes now.
    public mutating func prune(_ policy: RetentionPolicy, now: Date, keeping: Set<String>) -> [String] {
        prune({ _ in policy }, now: now, keeping: keeping)
    }
}
