import Dispatch
import Foundation
import JobRunnerCore

/// Runs plugin jobs by calling the plugin in this process (`isolation: inprocess`).
///
/// `invoke` blocks its thread, so calls go to Dispatch's threads, never to the cooperative pool
/// the runner lives on. A call cannot be interrupted: on a timeout or a stop the attempt ends at
/// once, as `timeout` or `interrupted`, and whatever the handler returns later is dropped.
public struct InProcessPluginHandler: JobHandler {
    let catalog: PluginCatalog
    let clock: any RunnerClock
    private static let queue = DispatchQueue(label: "jobrunner.plugins", attributes: .concurrent)

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
        let bytes = PluginWire.request(for: request, handler: handler)
        let call = Call()
        let timer = request.job.timeout.map { timeout in
            let clock = self.clock
            let deadline = clock.now().addingTimeInterval(timeout.seconds)
            return Task {
                guard (try? await clock.sleep(until: deadline)) != nil else { return }
                call.finish(
                    AttemptResult(
                        outcome: .timeout,
                        reason: "timeout after \(JobDuration.format(timeout)); the handler was left running"))
            }
        }
        defer { timer?.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<AttemptResult, Never>) in
                call.start(continuation)
                Self.queue.async {
                    call.finish(PluginWire.result(from: plugin.invoke(handler: handler, request: bytes)))
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
