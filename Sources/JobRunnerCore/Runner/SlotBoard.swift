import Foundation

/// Attempts holding pipeline slots: per pipeline, and in all (against `--jobs`).
public struct SlotsTaken: Sendable, Hashable {
    /// Running attempts per pipeline; a pipeline with none has no entry.
    public private(set) var perPipeline: [String: Int] = [:]
    public private(set) var total = 0

    public init(perPipeline: [String: Int] = [:]) {
        for (name, count) in perPipeline where count > 0 { self.perPipeline[name] = count }
        total = self.perPipeline.values.reduce(0, +)
    }

    /// Attempts of `pipeline`.
    public subscript(pipeline: String) -> Int { perPipeline[pipeline, default: 0] }

    static func + (lhs: SlotsTaken, rhs: SlotsTaken) -> SlotsTaken {
        SlotsTaken(perPipeline: lhs.perPipeline.merging(rhs.perPipeline, uniquingKeysWith: +))
    }

    static func - (lhs: SlotsTaken, rhs: SlotsTaken) -> SlotsTaken {
        SlotsTaken(
            perPipeline: lhs.perPipeline.merging(rhs.perPipeline.mapValues { -$0 }, uniquingKeysWith: +))
    }
}

/// The pipeline slots of every run a runner works on at once — the run of one-shot jobs and the
/// periodic occurrences, each a ``Scheduler`` of its own — so that together they keep each
/// pipeline's `maxConcurrent` and the `--jobs` cap (SPEC 5.3, 4). Each run is told what the
/// others hold before it decides; a run that waits for a slot is woken when one frees.
struct SlotBoard {
    /// What all runs hold.
    private(set) var total = SlotsTaken()
    private var byRun: [String: SlotsTaken] = [:]
    /// What each run was last told the others hold.
    private var told: [String: SlotsTaken] = [:]
    /// Runs with ready jobs that wait for a slot: the pipelines they wait on (`nil`: the
    /// `--jobs` cap, any slot).
    private var wanting: [String: Set<String?>] = [:]

    /// What the other runs hold, for a run about to decide; nil when it knows already.
    mutating func news(for runID: String) -> SlotsTaken? {
        let elsewhere = total - (byRun[runID] ?? SlotsTaken())
        guard told[runID, default: SlotsTaken()] != elsewhere else { return nil }
        told[runID] = elsewhere
        return elsewhere
    }

    /// What the other runs hold, for a run that is being opened (it holds nothing yet).
    mutating func opening(_ runID: String) -> SlotsTaken {
        told[runID] = total
        return total
    }

    /// Takes what a run holds after it decided and which slots it waits for; returns the other
    /// runs that wait for a slot this freed, in run id order.
    mutating func update(_ runID: String, taken: SlotsTaken, wanting wanted: Set<String?>) -> [String] {
        let before = byRun[runID] ?? SlotsTaken()
        byRun[runID] = taken.total == 0 ? nil : taken
        total = total - before + taken
        if wanted.isEmpty { wanting[runID] = nil } else { wanting[runID] = wanted }
        guard taken.total < before.total || before.perPipeline.contains(where: { taken[$0.key] < $0.value })
        else { return [] }
        let freed = Set(before.perPipeline.keys.filter { taken[$0] < before[$0] })
        return wanting.keys.sorted().filter { other in
            other != runID
                && wanting[other, default: []].contains { wait in wait.map(freed.contains) ?? true }
        }
    }

    /// A run closed: it holds nothing more.
    mutating func remove(_ runID: String) {
        if let taken = byRun.removeValue(forKey: runID) { total = total - taken }
        told[runID] = nil
        wanting[runID] = nil
    }

    /// Whether the board knows nothing: no run holds, waits for or was told of a slot.
    var isEmpty: Bool { byRun.isEmpty && wanting.isEmpty && told.isEmpty }
}
