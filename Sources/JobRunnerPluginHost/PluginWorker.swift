import Foundation
import JobRunnerCore

/// One long-lived process that runs the calls of one plugin library, one call at a time
/// (`isolation: process`). It answers a request frame (the plugin ABI's JSON request) with a
/// response frame (the JSON response); when it starts it sends one frame of its own: empty when
/// the plugin is loaded and it is ready, else the reason it cannot load it (and then exits).
///
/// The command line makes them (a `jobrunner plugin-worker` child process); tests use fakes.
public protocol PluginWorker: AnyObject, Sendable {
    /// Sends `request` (nil: sends nothing and waits for the worker's next frame, the one it
    /// writes when it is ready) and waits for the answer. Past `deadline`, or when the caller
    /// is cancelled, the worker is ended by `teardown` (SIGTERM, `killGrace`, SIGKILL) before
    /// this returns.
    func exchange(_ request: [UInt8]?, deadline: Deadline?, teardown: Teardown) async -> PluginWorkerExchange

    /// Asks an idle worker to exit (its input is closed); does not wait.
    func stop()
}

/// How one exchange with a ``PluginWorker`` ended.
public enum PluginWorkerExchange: Sendable, Hashable {
    /// It answered with this frame; the worker is ready for the next call.
    case reply([UInt8])
    /// It exited with this status before answering.
    case exited(Int32)
    /// A signal ended it before it answered (a crash of the handler, or a kill from elsewhere).
    case signalled(Int32)
    /// The teardown policy ended the worker: the deadline passed, or the caller was cancelled
    /// (the runner is stopping).
    case stopped(Teardown.Stop)
    /// It announced a frame of `length` bytes, more than the `limit` a frame may have, and was
    /// ended.
    case tooLarge(length: Int, limit: Int)
    /// Its process could not be started; the text says why.
    case failedToStart(String)
}

/// Starts a worker for the plugin `name` in the library at `library`, or says why it cannot.
public typealias PluginWorkerStarter =
    @Sendable (_ library: String, _ name: String) async -> Result<any PluginWorker, PluginWorkerStartError>

/// Why a plugin worker could not be started.
public struct PluginWorkerStartError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public var reason: String
    public var description: String { reason }

    /// A failure that says `reason`.
    public init(reason: String) {
        self.reason = reason
    }
}
