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
    /// turns how it ended into the attempt's result. The call's deadline counts from the moment
    /// it has a worker, or room to start one; past it, or when the caller is cancelled, the
    /// worker is ended by `teardown`.
    public nonisolated func call(
        library: String, plugin: String, request: [UInt8], teardown: Teardown
    ) async -> AttemptResult {
        let lease = await acquire(library)
        let deadline = teardown.deadline(from: clock.now())
        let worker: any PluginWorker
        switch lease {
        case .stopped:
            return AttemptResult(Teardown.Stop.interrupted.end)
        case .worker(let ready):
            worker = ready
        case .startOne:
            switch await startWorker(library: library, plugin: plugin, deadline: deadline, teardown: teardown)
            {
            case .success(let started): worker = started
            case .failure(let failure):
                await giveBack(library, nil)
                return AttemptResult(failure.end)
            }
        }
        if Task.isCancelled {
            await giveBack(library, worker)
            return AttemptResult(Teardown.Stop.interrupted.end)
        }
        let exchange = await worker.exchange(request, deadline: deadline, teardown: teardown)
        if case .reply(let response) = exchange {
            await giveBack(library, worker)
            return AttemptResult(pluginResponse: response)
        }
        await giveBack(library, nil)
        return AttemptResult(Self.end(of: exchange, beforeReady: false))
    }

    /// Starts a worker and waits for its first frame: ready, or why it cannot load the plugin.
    /// The attempt's `deadline` may pass meanwhile.
    private nonisolated func startWorker(
        library: String, plugin: String, deadline: Deadline?, teardown: Teardown
    ) async -> Result<any PluginWorker, FailedStart> {
        if Task.isCancelled { return .failure(FailedStart(Teardown.Stop.interrupted.end)) }
        let worker: any PluginWorker
        switch await start(library, plugin) {
        case .failure(let failure):
            return .failure(FailedStart(.cannotStart(.pluginProcess(.worker, failure.reason))))
        case .success(let started):
            worker = started
        }
        let hello = await worker.exchange(nil, deadline: deadline, teardown: teardown)
        switch hello {
        case .reply(let bytes) where bytes.isEmpty:
            return .success(worker)
        case .reply(let bytes):
            worker.stop()
            let why = String(decoding: bytes.prefix(1000), as: UTF8.self)
            return .failure(FailedStart(.cannotStart(.pluginNotLoaded(why))))
        default:
            return .failure(FailedStart(Self.end(of: hello, beforeReady: true)))
        }
    }

    /// An attempt's end for a start that failed.
    private struct FailedStart: Error {
        var end: AttemptEnd
        init(_ end: AttemptEnd) { self.end = end }
    }

    /// The end of an exchange that did not get a reply (`beforeReady`: the worker's first, while
    /// it started).
    private static func end(of exchange: PluginWorkerExchange, beforeReady: Bool) -> AttemptEnd {
        switch exchange {
        case .reply(let bytes):
            return AttemptResult(pluginResponse: bytes).end
        case .exited(let status):
            return .crashed(.init(.worker, .exited(status), beforeReady: beforeReady))
        case .signalled(let signal):
            return .crashed(.init(.worker, .signalled(signal), beforeReady: beforeReady))
        case .stopped(let stop):
            return stop.end
        case .tooLarge(let length, let limit):
            return .refused(.oversizedFrame(length: length, limit: limit, beforeReady: beforeReady))
        case .failedToStart(let why):
            return .cannotStart(.pluginProcess(.worker, why))
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
