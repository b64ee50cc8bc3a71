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
/// A call cannot be interrupted: by the attempts' one ``Teardown`` policy, a timeout or a stop
/// ends the attempt at once, as `timeout after D` or `the runner stopped`, and the call, which has
/// no process to end, is abandoned: whatever the handler returns later is dropped.
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
        let watch = AttemptWatch<AttemptResult>()
        submit(request, watch)
        return await withTaskCancellationHandler {
            await watch.end.result
        } onCancel: {
            watch.interrupt()
        }
    }

    /// The same without a task: `ended` gets the result, on the thread that made it.
    public func start(_ request: AttemptRequest, ended: @escaping @Sendable (AttemptResult) -> Void)
        -> AttemptStop?
    {
        let watch = AttemptWatch<AttemptResult>()
        watch.onEnd { ended($0.result) }
        submit(request, watch)
        return AttemptStop { watch.interrupt() }
    }

    /// Queues the call for a thread; `watch` gets its result, unless a stop or the deadline
    /// ended it first. The request is made on that thread too: `start` is called by the
    /// runner's own loop, which has every other attempt to see to.
    private func submit(_ request: AttemptRequest, _ watch: AttemptWatch<AttemptResult>) {
        let catalog = self.catalog
        let clock = self.clock
        threads.submit { running in
            guard running else { return watch.interrupt() }
            // Stopped while it waited for a thread: the handler is not called at all.
            guard !watch.isEnded else { return }
            let (plugin, handler): (LoadedPlugin, String)
            switch catalog.target(of: request) {
            case .success(let target): (plugin, handler) = target
            case .failure(let failure): return watch.finish(AttemptResult(failure.end), at: nil)
            }
            let bytes = PluginRequest(attempt: request, handler: handler).jsonBytes
            // The deadline counts from the call, not from the wait for a thread.
            watch.arm(Teardown(job: request.job).deadline(from: clock.now()), clock: clock)
            let result = plugin.invoke(handler: handler, request: bytes) {
                AttemptResult(pluginResponse: $0)
            }
            watch.finish(result, at: clock.now())
        }
    }
}
