import Foundation

/// The pipelines of a run as the scheduler uses them (SPEC 5.3): each one's ready jobs, best
/// first; its running attempts against `maxConcurrent`; its suspend count; for a sequential
/// pipeline, how many jobs of each file are still open. Jobs held back by a backoff delay wait
/// here too, with their due date.
struct PipelineLanes {
    private let plan: RunPlan
    private let maxRunning: Int?
    private var ready: [String: ReadyQueue] = [:]
    private var delayed: [String: Date] = [:]
    private var runningPerPipeline: [String: Int] = [:]
    private(set) var runningCount = 0
    private var openByFile: [String: [Int: Int]] = [:]
    private(set) var suspended: [String: Int]
    /// Attempts the other runs of the runner hold (an occurrence beside the run of one-shot
    /// jobs): they count against the same `maxConcurrent` and `--jobs` (SPEC 5.3).
    var elsewhere = SlotsTaken()

    init(plan: RunPlan, maxRunning: Int?, suspended: [String: Int]) {
        self.plan = plan
        self.maxRunning = maxRunning
        self.suspended = suspended
    }

    // MARK: Jobs coming and going

    /// A job that is not final counts as open in its file (sequential pipelines).
    mutating func opened(_ job: RunPlan.Job) {
        if plan.isSequential(job.pipeline) {
            openByFile[job.pipeline, default: [:]][job.fileIndex, default: 0] += 1
        }
    }

    /// A job became final: it leaves every queue, and its file has one open job less.
    mutating func closed(_ job: RunPlan.Job) {
        delayed[job.id] = nil
        ready[job.pipeline]?.remove(job.id)
        if plan.isSequential(job.pipeline) {
            openByFile[job.pipeline, default: [:]][job.fileIndex, default: 1] -= 1
        }
    }

    /// Makes a job ready to start.
    mutating func makeReady(_ job: RunPlan.Job) {
        ready[job.pipeline, default: ReadyQueue()].insert(
            job.id, priority: job.priority, order: plan.order(of: job.id),
            file: plan.isSequential(job.pipeline) ? job.fileIndex : 0)
    }

    /// Takes a job out of its ready queue: it has a need to wait for again.
    mutating func unready(_ job: RunPlan.Job) { ready[job.pipeline]?.remove(job.id) }

    /// Holds a job back until `date` (a backoff delay).
    mutating func delay(_ job: RunPlan.Job, until date: Date) { delayed[job.id] = date }

    func isDelayed(_ id: String) -> Bool { delayed[id] != nil }

    /// The earliest date a held-back job becomes ready.
    var nextDueDate: Date? { delayed.values.min() }

    /// Moves held-back jobs whose date has come to the ready queues.
    mutating func releaseDue(now: Date) {
        guard let first = nextDueDate, first <= now else { return }
        for (id, due) in delayed where due <= now {
            delayed[id] = nil
            if let job = plan.job(id) { makeReady(job) }
        }
    }

    /// Ready jobs of every pipeline, in no particular order.
    var readyJobs: [String] { ready.values.flatMap(\.ids) }

    /// At most how many ready jobs could start now: as many as the free slots of their pipelines
    /// and the global cap allow (suspensions and the rest not looked at).
    var roomToStart: Int {
        var room = 0
        for (name, queue) in ready {
            let limit = plan.maxConcurrent(name)
            room +=
                limit == 0
                ? queue.count
                : min(queue.count, max(0, limit - runningPerPipeline[name, default: 0] - elsewhere[name]))
        }
        if let maxRunning { room = min(room, max(0, maxRunning - runningCount - elsewhere.total)) }
        return room
    }

    /// The slots this run's attempts hold.
    var taken: SlotsTaken { SlotsTaken(perPipeline: runningPerPipeline) }

    /// The slots ready jobs wait for: each pipeline (not suspended) whose ready jobs find it
    /// full, and `nil` when the `--jobs` cap holds them back.
    var wanted: Set<String?> {
        var wanted = Set<String?>()
        for (name, queue) in ready where !queue.isEmpty && suspended[name, default: 0] == 0 {
            if !hasSlot(name) { wanted.insert(name) }
            if let maxRunning, runningCount + elsewhere.total >= maxRunning { wanted.insert(nil) }
        }
        return wanted
    }

    // MARK: Starting

    /// Takes the best ready job that may start now out of its queue: the pipeline is not
    /// suspended and has a slot, the global cap allows one more, and `allowed` accepts it (used
    /// to pass over jobs that need the internet while offline). Among pipelines the higher
    /// priority wins, then load order.
    mutating func takeNext(online: Bool, allowed: (RunPlan.Job) -> Bool) -> RunPlan.Job? {
        if let maxRunning, runningCount + elsewhere.total >= maxRunning { return nil }
        var best: RunPlan.Job?
        for name in ready.keys.sorted() {
            guard suspended[name, default: 0] == 0, hasSlot(name),
                let job = startable(in: name, online: online, allowed: allowed)
            else { continue }
            if let current = best,
                !(job.priority > current.priority
                    || (job.priority == current.priority
                        && plan.order(of: job.id) < plan.order(of: current.id)))
            {
                continue
            }
            best = job
        }
        if let best { ready[best.pipeline]?.remove(best.id) }
        return best
    }

    /// An attempt of `job` started: it holds a slot until it ends.
    mutating func attemptStarted(_ job: RunPlan.Job) {
        runningPerPipeline[job.pipeline, default: 0] += 1
        runningCount += 1
    }

    /// An attempt of `job` ended: its slot is free.
    mutating func attemptEnded(_ job: RunPlan.Job) {
        runningPerPipeline[job.pipeline, default: 1] -= 1
        runningCount -= 1
    }

    /// Takes new suspend counts; returns the pipelines that became suspended and those that
    /// were resumed, in name order.
    mutating func setSuspensions(_ counts: [String: Int]) -> (suspended: [String], resumed: [String]) {
        var result: (suspended: [String], resumed: [String]) = ([], [])
        for name in Set(counts.keys).union(suspended.keys).sorted() {
            let before = suspended[name, default: 0]
            let after = counts[name, default: 0]
            suspended[name] = after
            if before == 0 && after > 0 { result.suspended.append(name) }
            if before > 0 && after == 0 { result.resumed.append(name) }
        }
        return result
    }

    func isSuspended(_ pipeline: String) -> Bool { suspended[pipeline, default: 0] > 0 }

    private func hasSlot(_ name: String) -> Bool {
        let limit = plan.maxConcurrent(name)
        return limit == 0 || runningPerPipeline[name, default: 0] + elsewhere[name] < limit
    }

    /// The best ready job of pipeline `name` that may start now, left in its queue.
    private mutating func startable(in name: String, online: Bool, allowed: (RunPlan.Job) -> Bool)
        -> RunPlan.Job?
    {
        guard ready[name]?.isEmpty == false else { return nil }
        if !online && plan.pipelines[name]?.requiresInternet == true { return nil }
        var currentFile: Int?
        if plan.isSequential(name), let openFiles = openByFile[name] {
            currentFile = openFiles.filter({ $0.value > 0 }).keys.min()
        }
        if online {
            // Sequential queues put earlier files first: the best job is of the open file or none is.
            guard let id = ready[name]?.first(), let job = plan.job(id) else { return nil }
            if let currentFile, job.fileIndex != currentFile { return nil }
            return job
        }
        let plan = self.plan
        let id = ready[name]?.first { id in
            guard let job = plan.job(id) else { return false }
            if let currentFile, job.fileIndex != currentFile { return false }
            return allowed(job)
        }
        return id.flatMap(plan.job)
    }
}
