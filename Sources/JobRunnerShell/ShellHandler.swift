import Foundation
import Glibc
import JobRunnerCore
import Subprocess
import Synchronization

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// Runs `run:` jobs: a command line through `/bin/sh -c`, or an argv without a shell, in a
/// process group of its own, with the environment of SPEC 5.2 and its output in a capped log.
///
/// A timeout or a stopping runner ends the whole process group: SIGTERM, then SIGKILL after
/// the grace period. Processes a job leaves behind when its main process exits are ended the
/// same way, like systemd's `KillMode=control-group`.
public struct ShellHandler: JobHandler {
    /// Time between SIGTERM and SIGKILL.
    public var gracePeriod: Duration
    public var clock: any RunnerClock
    /// The runner's environment, which jobs inherit.
    public var baseEnvironment: [String: String]
    public var logLimit: Int
    private let directories = KnownDirectories()

    public init(
        clock: any RunnerClock = SystemClock(), gracePeriod: Duration = .seconds(5),
        baseEnvironment: [String: String] = ProcessInfo.processInfo.environment,
        logLimit: Int = CappedLog.defaultLimit
    ) {
        self.clock = clock
        self.gracePeriod = gracePeriod
        self.baseEnvironment = baseEnvironment
        self.logLimit = logLimit
    }

    /// The environment an attempt sees (SPEC 5.2, 5.7).
    public func environment(for request: AttemptRequest, files: (output: String, control: String)) -> [String:
        String]
    {
        var environment = baseEnvironment
        for (key, value) in request.job.environment { environment[key] = value }
        for (key, value) in request.job.parameters {
            environment["JOBRUNNER_PARAM_" + Self.environmentName(key)] = value.environmentText
        }
        for (job, outputs) in request.neededOutputs {
            for (key, value) in outputs {
                environment["JOBRUNNER_OUT_\(Self.environmentName(job))_\(Self.environmentName(key))"] = value
            }
        }
        environment["JOBRUNNER_RUN"] = request.runID
        environment["JOBRUNNER_JOB"] = request.job.id
        environment["JOBRUNNER_ATTEMPT"] = String(request.attempt)
        environment["JOBRUNNER_PIPELINE"] = request.job.pipeline
        environment["JOBRUNNER_OUTPUT"] = files.output
        environment["JOBRUNNER_CONTROL"] = files.control
        return environment
    }

    /// Upper case, every character other than A-Z and 0-9 as `_` (SPEC 5.7).
    public static func environmentName(_ text: String) -> String {
        String(
            text.uppercased().unicodeScalars.map { scalar -> Character in
                switch scalar {
                case "A"..."Z", "0"..."9": return Character(scalar)
                default: return "_"
                }
            })
    }

    public func run(_ request: AttemptRequest) async -> AttemptResult {
        await ChildSlots.shared.withSlot {
            if Task.isCancelled { return AttemptResult(outcome: .interrupted, reason: "runner stopping") }
            return await runChild(request)
        }
    }

    private func runChild(_ request: AttemptRequest) async -> AttemptResult {
        let files = AttemptFiles(
            directory: request.workDirectory, job: request.job.id, attempt: request.attempt)
        let log = CappedLog(path: request.logPath, limit: logLimit)
        do {
            try directories.ensure(request.workDirectory)
        } catch {
            return AttemptResult(outcome: .failed, reason: "cannot create \(request.workDirectory): \(error)")
        }
        files.clear()
        let executable: Executable
        let arguments: Arguments
        switch request.job.handler {
        case .shell(let command):
            executable = .path("/bin/sh")
            arguments = ["-c", command]
        case .argv(let argv):
            let program = argv.first ?? ""
            executable = program.contains("/") ? .path(FilePath(program)) : .name(program)
            arguments = Arguments(Array(argv.dropFirst()))
        case .plugin(let plugin, let handler):
            log.appendLine("jobrunner: plugin handler \(plugin).\(handler) cannot run in the shell handler")
            log.finish()
            return AttemptResult(outcome: .failed, reason: "not a shell job")
        }
        var environment: [Environment.Key: String?] = [:]
        for (key, value) in self.environment(for: request, files: (files.outputPath, files.controlPath)) {
            environment[Environment.Key(stringLiteral: key)] = value
        }
        var options = PlatformOptions()
        options.processGroupID = 0
        options.teardownSequence = [
            .gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: gracePeriod)
        ]

        let state = AttemptState()
        let clock = self.clock
        let deadline = request.job.timeout.map { clock.now().addingTimeInterval($0.seconds) }
        let gracePeriod = self.gracePeriod
        let status: TerminationStatus
        do {
            let result = try await Subprocess.run(
                executable, arguments: arguments, environment: .custom([:]).updating(environment),
                workingDirectory: FilePath(request.job.workingDirectory), platformOptions: options,
                input: .none,
                output: .sequence, error: .combinedWithOutput
            ) { execution in
                let pid = execution.processIdentifier.value
                state.processGroup.store(pid, ordering: .relaxed)
                request.onSpawn(pid)
                return await withTaskGroup(of: Void.self) { group in
                    if let deadline {
                        group.addTask {
                            do {
                                try await clock.sleep(until: deadline)
                            } catch {
                                return
                            }
                            state.timedOut.store(true, ordering: .relaxed)
                            await execution.teardown(using: [
                                .gracefulShutDown(
                                    toProcessGroup: true, allowedDurationToNextStep: gracePeriod)
                            ])
                        }
                    }
                    do {
                        for try await buffer in execution.standardOutput {
                            buffer.withUnsafeBytes { log.append($0) }
                        }
                    } catch {
                        // The child exited while a process it left behind holds the pipe, or
                        // the attempt was cancelled: what was read is kept.
                    }
                    group.cancelAll()
                }
            }
            status = result.terminationStatus
        } catch {
            log.appendLine("jobrunner: cannot start \(request.job.handler.displayName): \(error)")
            log.finish()
            files.remove()
            return AttemptResult(outcome: .failed, exitCode: 127, reason: "cannot start: \(error)")
        }
        let leader = state.processGroup.load(ordering: .relaxed)
        if leader > 0 { await ProcessGroups.terminate(group: leader, gracePeriod: gracePeriod) }
        log.finish()
        defer { files.remove() }

        if Task.isCancelled {
            return AttemptResult(outcome: .interrupted, reason: "the runner stopped")
        }
        if state.timedOut.load(ordering: .relaxed) {
            return AttemptResult(outcome: .timeout, reason: "timeout")
        }
        let control = files.readControl()
        switch status {
        case .exited(let code) where code == 0:
            switch files.readOutputs() {
            case .failure(let error):
                return AttemptResult(outcome: .failed, exitCode: 0, reason: error.description)
            case .success(let outputs):
                if let reason = control.skip {
                    return AttemptResult(
                        outcome: .skipped, exitCode: 0, reason: reason.isEmpty ? "skipped" : reason,
                        outputs: outputs)
                }
                return AttemptResult(outcome: .succeeded, exitCode: 0, outputs: outputs)
            }
        case .exited(let code):
            let outcome: AttemptOutcome = code == RetryPolicy.tempFailExitCode ? .tempfail : .failed
            return AttemptResult(
                outcome: outcome, exitCode: code, reason: "exit:\(code)", retryAfter: control.retryAfter)
        case .signaled(let signal):
            return AttemptResult(
                outcome: .failed, signal: signal, reason: "signal:\(signal)", retryAfter: control.retryAfter)
        }
    }
}

extension HandlerSpec {
    /// How the handler reads in messages.
    var displayName: String {
        switch self {
        case .shell(let command): return "'\(command)'"
        case .argv(let argv): return "'\(argv.joined(separator: " "))'"
        case .plugin(let plugin, let handler): return "\(plugin).\(handler)"
        }
    }
}

/// What the attempt's concurrent parts tell each other.
private final class AttemptState: Sendable {
    let timedOut = Atomic<Bool>(false)
    let processGroup = Atomic<Int32>(0)
}

/// Directories already made, so each run's directory is created once, not once per attempt.
private final class KnownDirectories: Sendable {
    private let made = Mutex<Set<String>>([])

    func ensure(_ path: String) throws {
        if made.withLock({ $0.contains(path) }) { return }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        made.withLock { _ = $0.insert(path) }
    }
}
