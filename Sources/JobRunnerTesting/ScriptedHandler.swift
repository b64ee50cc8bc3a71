import Foundation
import JobRunnerCore

/// A handler for runner tests: returns scripted results per job, records every call, tracks
/// how many attempts ran at once, and can hold chosen jobs until the test releases them.
public final class ScriptedHandler: JobHandler {
    private struct State {
        var scripts: [String: [AttemptResult]]
        var calls: [(job: String, attempt: Int)] = []
        var requests: [String: AttemptRequest] = [:]
        var running = 0
        var maxRunning = 0
        var held: Set<String>
        var waiting: [String: CheckedContinuation<Void, Never>] = [:]
        var startWatchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state: Locked<State>

    /// - Parameters:
    ///   - scripts: results per job, one per attempt; a job without (more) script succeeds.
    ///   - hold: jobs whose attempts wait until ``release(_:)``.
    public init(scripts: [String: [AttemptResult]] = [:], hold: Set<String> = []) {
        state = Locked(State(scripts: scripts, held: hold))
    }

    public func run(_ request: AttemptRequest) async -> AttemptResult {
        let id = request.job.id
        let (mustWait, watchers) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
            state.calls.append((id, request.attempt))
            state.requests[id] = request
            state.running += 1
            state.maxRunning = max(state.maxRunning, state.running)
            let count = state.calls.count
            let ready = state.startWatchers.filter { $0.count <= count }.map(\.continuation)
            state.startWatchers.removeAll { $0.count <= count }
            return (state.held.contains(id), ready)
        }
        for watcher in watchers { watcher.resume() }
        if mustWait {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { state -> Bool in
                        guard state.held.contains(id), !Task.isCancelled else { return true }
                        state.waiting[id] = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                let continuation = state.withLock { $0.waiting.removeValue(forKey: id) }
                continuation?.resume()
            }
        }
        let cancelled = Task.isCancelled
        return state.withLock { state in
            state.running -= 1
            if cancelled { return AttemptResult(.interrupted(.runnerStopped)) }
            guard var script = state.scripts[id], !script.isEmpty else { return .succeeded }
            let result = script.removeFirst()
            state.scripts[id] = script
            return result
        }
    }

    /// Lets a held job's attempt (and later ones) go on.
    public func release(_ job: String) {
        let continuation = state.withLock { state in
            state.held.remove(job)
            return state.waiting.removeValue(forKey: job)
        }
        continuation?.resume()
    }

    /// Returns once at least `count` attempts have started.
    public func waitForStarts(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.calls.count >= count { return true }
                state.startWatchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Every call, in start order.
    public var calls: [(job: String, attempt: Int)] { state.withLock { $0.calls } }
    /// The jobs started, in order.
    public var startedJobs: [String] { calls.map(\.job) }
    /// The most attempts that ran at once.
    public var maxConcurrent: Int { state.withLock { $0.maxRunning } }
    /// The last request a job got.
    public func lastRequest(_ job: String) -> AttemptRequest? { state.withLock { $0.requests[job] } }
}

/// Collects events for assertions; ``waitFor(_:job:)`` awaits one.
public final class RecordingObserver: RunObserver {
    private struct State {
        var opened: [OpenedRun] = []
        var events: [RunEvent] = []
        var watchers: [(kind: RunEvent.Kind, job: String?, continuation: CheckedContinuation<Void, Never>)] =
            []
    }
    private let storage = Locked(State())
    public init() {}

    public func opened(_ run: OpenedRun) { storage.withLock { $0.opened.append(run) } }

    public func record(_ event: RunEvent) {
        let ready = storage.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.events.append(event)
            let matches = {
                (watcher: (kind: RunEvent.Kind, job: String?, continuation: CheckedContinuation<Void, Never>))
                in
                watcher.kind == event.kind && (watcher.job == nil || watcher.job == event.job)
            }
            let ready = state.watchers.filter(matches).map(\.continuation)
            state.watchers.removeAll(where: matches)
            return ready
        }
        for watcher in ready { watcher.resume() }
    }

    /// Returns once an event of this kind (about this job, if given) has been recorded.
    public func waitFor(_ kind: RunEvent.Kind, job: String? = nil) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let seen = storage.withLock { state -> Bool in
                if state.events.contains(where: { $0.kind == kind && (job == nil || $0.job == job) }) {
                    return true
                }
                state.watchers.append((kind, job, continuation))
                return false
            }
            if seen { continuation.resume() }
        }
    }

    public var events: [RunEvent] { storage.withLock { $0.events } }
    /// The runs the runner said it opened, in order.
    public var openedRuns: [OpenedRun] { storage.withLock { $0.opened } }
    /// `kind job` strings, e.g. `started build`, for compact assertions.
    public var lines: [String] { events.map { "\($0.kind.rawValue) \($0.job ?? "")" } }
}
