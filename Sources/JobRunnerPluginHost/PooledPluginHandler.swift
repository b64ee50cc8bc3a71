import JobRunnerCore
import JobRunnerPluginAPI

/// Runs plugin jobs on persistent worker processes (`isolation: process`): each attempt is one
/// call on a worker of its plugin's ``PluginWorkerPool``, so a plugin that crashes fails only
/// that attempt, without a process start per attempt.
public struct PooledPluginHandler: JobHandler {
    let catalog: PluginCatalog
    let pool: PluginWorkerPool

    /// A handler that finds the jobs' plugins in `catalog` and calls them on `pool`'s workers.
    public init(catalog: PluginCatalog, pool: PluginWorkerPool) {
        self.catalog = catalog
        self.pool = pool
    }

    /// Runs one attempt on a worker and turns how the call ended into the attempt's result. The
    /// library is described (in a child), never loaded here: a library that turned bad during a
    /// run fails only the attempts that use it.
    public func run(_ request: AttemptRequest) async -> AttemptResult {
        let (plugin, handler): (PluginDescription, String)
        switch catalog.isolatedTarget(of: request) {
        case .success(let target): (plugin, handler) = target
        case .failure(let failure): return AttemptResult(failure.end)
        }
        let result = await pool.call(
            library: plugin.path, plugin: plugin.name,
            request: PluginRequest(attempt: request, handler: handler).jsonBytes,
            teardown: Teardown(job: request.job))
        // The worker wrote the handler's output straight into the log: capped now (SPEC 5.2).
        LogCap.cap(request.logPath)
        return result
    }
}
