import Foundation
import JobRunnerCore
import JobRunnerPluginHost
import JobRunnerShell

/// A plugin worker that is a `jobrunner plugin-worker` child process.
final class ProcessPluginWorker: PluginWorker {
    let process: WorkerProcess

    init(process: WorkerProcess) {
        self.process = process
    }

    /// Starts `executable plugin-worker` for the plugin `name` of `library`.
    static func start(executable: String, library: String, name: String, clock: any RunnerClock) async
        -> Result<any PluginWorker, PluginWorkerStartError>
    {
        let started = await WorkerProcess.start(
            program: executable, arguments: ["plugin-worker", "--library", library, "--plugin", name],
            clock: clock)
        switch started {
        case .success(let process): return .success(ProcessPluginWorker(process: process))
        case .failure(let error): return .failure(PluginWorkerStartError(reason: error.reason))
        }
    }

    func exchange(_ request: [UInt8]?, deadline: Deadline?, teardown: Teardown) async -> PluginWorkerExchange
    {
        switch await process.exchange(request, deadline: deadline, teardown: teardown) {
        case .reply(let bytes): return .reply(bytes)
        case .ended(.exited(let status)): return .exited(status)
        case .ended(.signalled(let signal)): return .signalled(signal)
        case .ended(.failedToStart(let why)): return .failedToStart(why)
        case .stopped(let stop): return .stopped(stop)
        case .tooLarge(let length):
            return .tooLarge(length: length, limit: WorkerFrames.maximumLength)
        }
    }

    func stop() {
        process.stop()
    }
}
