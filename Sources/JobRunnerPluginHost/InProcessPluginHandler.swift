import Foundation
import JobRunnerCore
import JobRunnerPluginAPI

/// Runs plugin jobs by calling the plugin in this process (`isolation: inprocess`).
///
/// `invoke` blocks its thread, so calls run on a fixed set of threads of their own (`threads`),
/// never on the cooperative pool the runner lives on nor on Dispatch's threads, which a Swift
/// plugin needs to run its async handler: blocking hundreds of those at once starves the
/// process. Calls beyond the threads' `count` wait for a thread, in order.
///
/// A call cannot be interrupted: on a timeout or a stop the attempt ends at once, as `timeout`
/// or `interrupted`, and whatever the handler returns later is dropped.
public struct InProcessPluginHandler: JobHandler {
    let catalog: PluginCatalog
    let threads: CallThreads
    let clock: any RunnerClock

    /// A handler whose calls block the threads of `threads`.
    /// - Parameters:
    ///   - catalog: where the jobs' plugins are loaded from.
    ///   - threads: the threads the calls run on, shared by every call. The caller sizes it,
    ///     starts it before the first attempt and shuts it down after the last; a call made
    ///     while it is not running ends at once as `interrupted`.
    ///   - clock: what timeouts are measured on.
    public init(catalog: PluginCatalog, threads: CallThreads, clock: any RunnerClock) {
        self.catalog = catalog
        self.threads = threads
        self.clock = clock
    }

    /// Calls the job's handler on one of the threads; returns its result, or ends the attempt
    /// first on a timeout or a stop.
    public func run(_ request: AttemptRequest) async -> AttemptResult {
        let call = Call()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<AttemptResult, Never>) in
                call.start { continuation.resume(returning: $0) }
                submit(request, call)
            }
        } onCancel: {
            call.finish(Self.stopped)
        }
    }

    /// The same without a task: `ended` gets the result, on the thread that made it.
    public func start(_ request: AttemptRequest, ended: @escaping @Sendable (AttemptResult) -> Void)
        -> AttemptStop?
    {
        let call = Call()
        call.start(ended)
        submit(request, call)
        return AttemptStop { call.finish(Self.stopped) }
    }

    private static let stopped = AttemptResult(outcome: .interrupted, reason: "runner stopping")

    /// Queues the call for a thread; `call` gets its result, unless a stop or the timeout
    /// gave it one first. The request is made on that thread too: `start` is called by the
    /// runner's own loop, which has every other attempt to see to.
    private func submit(_ request: AttemptRequest, _ call: Call) {
        let catalog = self.catalog
        let clock = self.clock
        threads.submit { running in
            guard running else {
                return call.finish(Self.stopped)
            }
            // Stopped while it waited for a thread: the handler is not called at all.
            guard !call.isFinished else { return }
            let (plugin, handler): (LoadedPlugin, String)
            switch catalog.target(of: request) {
            case .success(let target): (plugin, handler) = target
            case .failure(let failure): return call.finish(failure.result)
            }
            let bytes = PluginRequest(attempt: request, handler: handler).jsonBytes
            let timeout = request.job.timeout
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
            let result = plugin.invoke(handler: handler, request: bytes) {
                AttemptResult(pluginResponse: $0)
            }
            timer?.cancel()
            call.finish(result)
        }
    }
}

/// One call's end, delivered once to whoever waits for it, by whichever comes first: the
/// plugin, the timeout, a stop.
final class Call: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var deliver: (@Sendable (AttemptResult) -> Void)?
    private var early: AttemptResult?
    private var done = false

    /// Says where the result goes; called once, before or after `finish`.
    func start(_ deliver: @escaping @Sendable (AttemptResult) -> Void) {
        let ready: AttemptResult? = lock.withLock {
            if let early {
                done = true
                return early
            }
            self.deliver = deliver
            return nil
        }
        if let ready { deliver(ready) }
    }

    /// Whether the call has its result already (a stop or a timeout came first).
    var isFinished: Bool { lock.withLock { done || early != nil } }

    func finish(_ result: AttemptResult) {
        let waiting: (@Sendable (AttemptResult) -> Void)? = lock.withLock {
            guard !done else { return nil }
            guard let deliver else {
                if early == nil { early = result }
                return nil
            }
            done = true
            self.deliver = nil
            return deliver
        }
        waiting?(result)
    }
}
