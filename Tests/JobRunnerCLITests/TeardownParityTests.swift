import Foundation
import JobRunnerCore
import JobRunnerPluginHost
import Testing

@testable import JobRunnerCLI
@testable import JobRunnerShell

/// The four ways an attempt runs — a shell job's process, an in-process plugin call, a call on a
/// plugin's worker, a plugin's process of the attempt's own — share one deadline and teardown
/// policy: a timeout ends each with the same typed reason and the same words, and so does a stop.
/// The handlers are wired as a run wires them, the isolated ones running the built `jobrunner`
/// and the `testkit` plugin built beside it.
@Suite(.serialized) struct TeardownParityTests {
    enum Way: String, CaseIterable, Sendable, CustomStringConvertible {
        case shell, inProcess, workerPool, perAttempt
        var description: String { rawValue }
    }

    static let timeout = Duration.milliseconds(500)

    /// A job that would run for 30 s, run `way`.
    static func job(_ way: Way, timeout: Duration?) -> JobDefinition {
        let isolation: Isolation =
            switch way {
            case .shell, .inProcess: .inprocess
            case .workerPool: .process
            case .perAttempt: .processPerAttempt
            }
        return JobDefinition(
            id: "hang-\(way)",
            handler: way == .shell ? .shell("sleep 30") : .plugin(plugin: "testkit", handler: "sleep"),
            parameters: way == .shell ? [:] : ["seconds": .int(30)], pipeline: "p", timeout: timeout,
            killGrace: .seconds(1), isolation: isolation)
    }

    /// The handlers of a run, on the system clock, and a directory for the attempts' files.
    final class Setup: Sendable {
        let handlers: JobHandlers
        let threads: PluginThreads
        let directory: String

        init() throws {
            directory =
                FileManager.default.temporaryDirectory.appendingPathComponent(
                    "jobrunner-teardown-\(UUID().uuidString)"
                ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            threads = PluginThreads(environment: ["JOBRUNNER_PLUGIN_THREADS": "2"])
            let catalog = PluginCatalog(
                searchPath: [testPluginDirectory],
                prober: PluginVetting.prober(executable: jobrunnerBinary, timeout: PluginVetting.timeout()))
            handlers = JobHandlers.standard(
                plugins: catalog, pluginThreads: threads.pool, clock: SystemClock(),
                environment: ["JOBRUNNER_PLUGIN_WORKERS": "1"], executable: jobrunnerBinary)
        }

        deinit {
            threads.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }

        func request(_ job: JobDefinition, onSpawn: @escaping @Sendable (Int32) -> Void = { _ in })
            -> AttemptRequest
        {
            AttemptRequest(
                runID: "r", job: job, attempt: 1, logPath: "\(directory)/logs/\(job.id)/1.log",
                workDirectory: "\(directory)/logs/\(job.id)", neededOutputs: [:], onSpawn: onSpawn)
        }
    }

    /// The process group an attempt's process led, once it is known.
    final class Spawned: Sendable {
        private let pid = Locked<Int32?>(nil)
        func set(_ value: Int32) { pid.withLock { $0 = value } }
        var value: Int32? { pid.withLock { $0 } }
    }

    @Test(arguments: Way.allCases) func aTimeoutEndsEveryWayAlike(_ way: Way) async throws {
        let setup = try Setup()
        let spawned = Spawned()
        let result = await setup.handlers.run(
            setup.request(Self.job(way, timeout: Self.timeout), onSpawn: { spawned.set($0) }))
        await setup.handlers.shutDown()
        #expect(result.end == .timedOut(after: Self.timeout), "\(way): \(result.end)")
        #expect(result.end.words == "timeout after 500ms")
        #expect(result.outcome == .timeout)
        #expect(result.exitCode == nil && result.signal == nil)
        // Where the attempt had a process group of its own, nothing of it is left.
        if let group = spawned.value {
            #expect(!ProcessGroups.isAlive(group: group), "\(way): group \(group) is left")
        }
    }

    @Test(arguments: Way.allCases) func aStopEndsEveryWayAlike(_ way: Way) async throws {
        let setup = try Setup()
        let (spawns, spawned) = AsyncStream<Int32>.makeStream()
        let request = setup.request(Self.job(way, timeout: nil), onSpawn: { spawned.yield($0) })
        let result: AttemptResult
        let ended = Locked<CheckedContinuation<AttemptResult, Never>?>(nil)
        if way == .inProcess {
            // As the runner starts these: without a task, stopped through what `start` returns.
            result = await withCheckedContinuation { continuation in
                ended.withLock { $0 = continuation }
                let stop = setup.handlers.start(request) { result in
                    ended.withLock { $0.take() }?.resume(returning: result)
                }
                #expect(stop != nil)
                stop?()
            }
        } else {
            let task = Task { await setup.handlers.run(request) }
            // Where the attempt has a process of its own, it is stopped once that runs.
            if way == .shell || way == .perAttempt {
                for await _ in spawns { break }
            }
            task.cancel()
            result = await task.value
        }
        await setup.handlers.shutDown()
        #expect(result.end == .interrupted(.runnerStopped), "\(way): \(result.end)")
        #expect(result.end.words == "the runner stopped")
        #expect(result.outcome == .interrupted)
    }
}
