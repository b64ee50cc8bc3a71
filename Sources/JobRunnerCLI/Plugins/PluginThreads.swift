import Foundation
import JobRunnerPluginHost

/// The threads in-process plugin calls block (`isolation: inprocess`): sized and started for one
/// run, stopped when it ends. `InProcessPluginHandler` gets `pool`.
struct PluginThreads: Sendable {
    /// The started pool.
    let pool: CallThreads

    /// Starts as many threads as ``count(environment:activeProcessors:)`` says.
    init(environment: [String: String], activeProcessors: Int = ProcessInfo.processInfo.activeProcessorCount)
    {
        pool = CallThreads(count: Self.count(environment: environment, activeProcessors: activeProcessors))
        pool.start()
    }

    /// How many in-process plugin calls run at once: `$JOBRUNNER_PLUGIN_THREADS` when set to a
    /// number (at least 1), else twice the cores, at least 4. A handler that waits (on the
    /// network, say) holds its thread while it waits: raise it for such handlers. More threads
    /// than that only cost quick handlers (20,000 `noop.ok` jobs: 16 threads took 12 % more CPU
    /// than 2, with five times the context switches).
    static func count(environment: [String: String], activeProcessors: Int) -> Int {
        if let setting = environment["JOBRUNNER_PLUGIN_THREADS"].flatMap({ Int($0) }) {
            return max(setting, 1)
        }
        return max(4, 2 * activeProcessors)
    }

    /// Stops the threads without waiting for them. When a run ends every attempt has its
    /// result, so a call still on a thread is one a timeout or a stop gave up on, and waiting
    /// for it would hold the exit hostage to a hung handler; calls still queued are dropped.
    func stop() {
        pool.stop()
    }
}
