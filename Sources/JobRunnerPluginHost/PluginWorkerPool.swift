import DequeModule
import Foundation
import JobRunnerCore

/// The persistent workers of `isolation: process`: for each plugin library, up to `capacity`
/// long-lived worker processes, each running one call at a time.
///
/// Workers start when calls need them (so a pipeline that runs one call at a time gets one
/// worker) and stay for the next call. Calls beyond `capacity` wait, in order, for a worker;
/// an attempt's timeout counts from the moment it has one, as a shell job's counts from its
/// spawn. A worker that dies during a call (a crash of the handler), that a timeout or a stop
/// ends, or that breaks the protocol fails only that call, and the next call that needs a
/// worker starts a new one. A worker that cannot start or cannot load the plugin fails the
/// attempt that asked for it, saying why.
public actor PluginWorkerPool {
    /// How many workers each plugin library may have at once.
    public nonisolated let capacity: Int
    private nonisolated let start: PluginWorkerStarter
    private nonisolated let clock: any RunnerClock
    private var libraries: [String: Library] = [:]
    private var stopped = false

    /// The workers of one library and the calls waiting for one.
    private struct Library {
        var idle: [any PluginWorker] = []
        /// Workers alive or being started, idle ones included.
        var live = 0
        var waiting = Deque<CheckedContinuation<Lease, Never>>()
    }

    /// What a call gets from the pool.
    private enum Lease {
        /// A ready worker, for this call alone until it is given back.
        case worker(any PluginWorker)
        /// Room for one more worker: the call starts it.
        case startOne
        /// The pool was shut down.
        case stopped
    }

    /// A pool of up to `capacity` (at least 1) workers per library, started with `start`;
    /// timeouts are measured on `clock`.
    public init(capacity: Int, clock: any RunnerClock, start: @escaping PluginWorkerStarter) {
        self.capacity = max(1, capacity)
        self.clock = clock
        self.start = start
    }

    /// How many workers a library gets: `$JOBRUNNER_PLUGIN_WORKERS` when set to a number (at
    /// least 1), else the number of cores. Each worker runs one call at a time, so more than
    /// the cores only helps handlers that wait (on the network, say).
    public static func capacity(environment: [String: String], activeProcessors: Int) -> Int {
        if let setting = environment["JOBRUNNER_PLUGIN_WORKERS"].flatMap({ Int($0) }) {
            return max(setting, 1)
        }
        return max(activeProcessors, 1)
    }

    /// Runs one call of the plugin `plugin` in library `library` on one of its workers and
    /// turns how it ended into the attempt's result.
    public nonisolated func call(
        library: String, plugin: String, request: [UInt8], timeout: Duration?, killGrace: Duration
    ) async -> AttemptResult {
        let lease = await acquire(library)
        let deadline = timeout.map { clock.now().addingTimeInterval($0.seconds) }
        let worker: any PluginWorker
        switch lease {
        case .stopped:
            return AttemptResult(outcome: .interrupted, reason: "runner stopping")
        case .worker(let ready):
            worker = ready
        case .startOne:
            switch await startWorker(
                library: library, plugin: plugin, timeout: timeout, deadline: deadline, killGrace: killGrace)
            {
            case .success(let started): worker = started
            case .failure(let failure):
                await giveBack(library, nil)
                return failure.result
            }
        }
        if Task.isCancelled {
            await giveBack(library, worker)
            return AttemptResult(outcome: .interrupted, reason: "runner stopping")
        }
        let exchange = await worker.exchange(request, deadline: deadline, killGrace: killGrace)
        if case .reply(let response) = exchange {
            await giveBack(library, worker)
            return AttemptResult(pluginResponse: response)
        }
        await giveBack(library, nil)
        return Self.result(of: exchange, timeout: timeout, when: "")
    }

    /// Starts a worker and waits for its first frame: ready, or why it cannot load the plugin.
    /// The attempt's `timeout` (ending at `deadline`) may pass meanwhile.
    private nonisolated func startWorker(
        library: String, plugin: String, timeout: Duration?, deadline: Date?, killGrace: Duration
    ) async -> Result<any PluginWorker, FailedStart> {
        if Task.isCancelled {
            return .failure(FailedStart(AttemptResult(outcome: .interrupted, reason: "runner stopping")))
        }
        let worker: any PluginWorker
        switch await start(library, plugin) {
        case .failure(let failure):
            return .failure(
                FailedStart(
                    AttemptResult(
                        outcome: .failed, reason: "cannot start the plugin's worker: \(failure.reason)")))
        case .success(let started):
            worker = started
        }
        let hello = await worker.exchange(nil, deadline: deadline, killGrace: killGrace)
        switch hello {
        case .reply(let bytes) where bytes.isEmpty:
            return .success(worker)
        case .reply(let bytes):
            worker.stop()
            let why = String(decoding: bytes.prefix(1000), as: UTF8.self)
            return .failure(
                FailedStart(
                    AttemptResult(outcome: .failed, reason: "the plugin's worker cannot load it: \(why)")))
        default:
            return .failure(
                FailedStart(Self.result(of: hello, timeout: timeout, when: " before it was ready")))
        }
    }

    /// An attempt's result for a start that failed.
    private struct FailedStart: Error {
        var result: AttemptResult
        init(_ result: AttemptResult) { self.result = result }
    }

    /// The result of an exchange that did not get a reply.
    private static func result(of exchange: PluginWorkerExchange, timeout: Duration?, when: String)
        -> AttemptResult
    {
        switch exchange {
        case .reply(let bytes):
            return AttemptResult(pluginResponse: bytes)
        case .exited(let status):
            return AttemptResult(
                outcome: .failed, exitCode: status, reason: "the plugin's worker exited \(status)\(when)")
        case .signalled(let signal):
            return AttemptResult(
                outcome: .failed, signal: signal,
                reason:
                    "the plugin's worker died\(when): signal \(signal) (\(IsolatedPluginHandler.signalName(signal)))"
            )
        case .timedOut:
            return AttemptResult(
                outcome: .timeout, reason: "timeout after \(timeout.map(JobDuration.format) ?? "?")")
        case .interrupted:
            return AttemptResult(outcome: .interrupted, reason: "runner stopping")
        case .broken(let why):
            return AttemptResult(outcome: .failed, reason: "the plugin's worker \(why)\(when)")
        }
    }

    private func acquire(_ library: String) async -> Lease {
        if stopped { return .stopped }
        if let worker = libraries[library, default: Library()].idle.popLast() { return .worker(worker) }
        if libraries[library, default: Library()].live < capacity {
            libraries[library, default: Library()].live += 1
            return .startOne
        }
        return await withCheckedContinuation { libraries[library, default: Library()].waiting.append($0) }
    }

    /// Gives a call's worker back (nil: it is gone, or never started), to the next call waiting
    /// for one or to the idle ones.
    private func giveBack(_ library: String, _ worker: (any PluginWorker)?) {
        guard let worker else {
            if let next = libraries[library]?.waiting.popFirst() {
                next.resume(returning: .startOne)
            } else {
                libraries[library, default: Library()].live -= 1
            }
            return
        }
        if stopped {
            worker.stop()
            libraries[library, default: Library()].live -= 1
        } else if let next = libraries[library]?.waiting.popFirst() {
            next.resume(returning: .worker(worker))
        } else {
            libraries[library, default: Library()].idle.append(worker)
        }
    }

    /// Stops the idle workers and turns away the calls waiting for one; a worker still in a call
    /// stops when it is given back. Workers also exit by themselves when the runner's process
    /// ends, however it ends.
    public func shutDown() {
        stopped = true
        for key in libraries.keys {
            guard var library = libraries[key] else { continue }
            for worker in library.idle { worker.stop() }
            library.live -= library.idle.count
            library.idle = []
            let waiting = library.waiting
            library.waiting = []
            libraries[key] = library
            for waiter in waiting { waiter.resume(returning: .stopped) }
        }
    }
}
