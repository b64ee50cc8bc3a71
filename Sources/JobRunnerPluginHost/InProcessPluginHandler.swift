import Foundation
import JobRunnerCore
import JobRunnerPluginAPI
import NIOPosix

/// Runs plugin jobs by calling the plugin in this process (`isolation: inprocess`).
///
/// `invoke` blocks its thread, so calls run on a fixed set of threads of their own
/// (``threadCount``), never on the cooperative pool the runner lives on nor on Dispatch's
/// threads, which a Swift plugin needs to run its async handler: blocking hundreds of those at
/// once starves the process. Calls beyond ``threadCount`` wait for a thread, in order.
///
/// A call cannot be interrupted: on a timeout or a stop the attempt ends at once, as `timeout`
/// or `interrupted`, and whatever the handler returns later is dropped.
public struct InProcessPluginHandler: JobHandler {
    let catalog: PluginCatalog
    let clock: any RunnerClock

    /// How many in-process plugin calls run at once: `$JOBRUNNER_PLUGIN_THREADS` when set to a
    /// positive number, else twice the cores, at least 4. A handler that waits (on the network,
    /// say) holds its thread while it waits: raise it for such handlers. More threads than that
    /// only cost quick handlers (20,000 `noop.ok` jobs: 16 threads took 12 % more CPU than 2,
    /// with five times the context switches).
    public static let threadCount: Int = {
        let setting = ProcessInfo.processInfo.environment["JOBRUNNER_PLUGIN_THREADS"].flatMap { Int($0) }
        return setting.map { max($0, 1) } ?? max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)
    }()

    private static let threads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: threadCount)
        pool.start()
        return pool
    }()

    public init(catalog: PluginCatalog, clock: any RunnerClock) {
        self.catalog = catalog
        self.clock = clock
    }

    public func run(_ request: AttemptRequest) async -> AttemptResult {
        let (plugin, handler): (LoadedPlugin, String)
        switch catalog.target(of: request) {
        case .success(let target): (plugin, handler) = target
        case .failure(let failure): return failure.result
        }
        let bytes = PluginRequest(attempt: request, handler: handler).jsonBytes
        let call = Call()
        let clock = self.clock
        let timeout = request.job.timeout
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<AttemptResult, Never>) in
                call.start(continuation)
                Self.threads.submit { state in
                    guard case .active = state else {
                        return call.finish(AttemptResult(outcome: .interrupted, reason: "runner stopping"))
                    }
                    // Stopped while it waited for a thread: the handler is not called at all.
                    guard !call.isFinished else { return }
                    // The timeout counts from the call, not from the wait for a thread.
                    let timer = timeout.map { timeout in
                        let deadline = clock.now().addingTimeInterval(timeout.seconds)
                        return Task {
                            guard (try? await clock.sleep(until: deadline)) != nil else { return }
                            call.finish(
                                AttemptResult(
                                    outcome: .timeout,
                                    reason:
                                        "timeout after \(JobDuration.format(timeout)); the handler was left running"
                                ))
                        }
                    }
                    let result = AttemptResult(
                        pluginResponse: plugin.invoke(handler: handler, request: bytes))
                    timer?.cancel()
                    call.finish(result)
                }
            }
        } onCancel: {
            call.finish(AttemptResult(outcome: .interrupted, reason: "runner stopping"))
        }
    }
}

/// One call's continuation, resumed by whichever comes first: the plugin, the timeout, a stop.
final class Call: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<AttemptResult, Never>?
    private var early: AttemptResult?
    private var done = false

    func start(_ continuation: CheckedContinuation<AttemptResult, Never>) {
        let ready: AttemptResult? = lock.withLock {
            if let early {
                done = true
                return early
            }
            self.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(returning: ready) }
    }

    /// Whether the call has its result already (a stop or a timeout came first).
    var isFinished: Bool { lock.withLock { done || early != nil } }

    func finish(_ result: AttemptResult) {
        let waiting: CheckedContinuation<AttemptResult, Never>? = lock.withLock {
            guard !done else { return nil }
            guard let continuation else {
                if early == nil { early = result }
                return nil
            }
            done = true
            self.continuation = nil
            return continuation
        }
        waiting?.resume(returning: result)
    }
}
