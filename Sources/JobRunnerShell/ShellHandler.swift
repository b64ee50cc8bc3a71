import Foundation
import JobRunnerCore

/// Runs `run:` jobs: a command line through `/bin/sh -c`, or an argv without a shell, as a
/// ``ChildProcess`` with the environment of SPEC 5.2 and its output in a capped log.
///
/// A timeout or a stopping runner ends the whole process group by the job's ``Teardown``:
/// SIGTERM, then SIGKILL after the job's `killGrace`. Processes a job leaves behind when its main
/// process exits are ended the same way, like systemd's `KillMode=control-group`.
public struct ShellHandler: JobHandler {
    /// Measures timeouts and grace periods.
    public var clock: any RunnerClock
    /// Shared with every other kind of child the runner starts, so together they stay under
    /// the open-file limit.
    public var slots: ChildSlots
    /// The runner's environment, which jobs inherit.
    public var baseEnvironment: [String: String]
    /// Bytes of output kept per attempt (SPEC 5.2).
    public var logLimit: Int
    /// Masked in logs as they are written (SPEC 3.1).
    public var secrets: Secrets
    private let directories = KnownDirectories()

    /// A handler whose children take their turn in `slots`.
    public init(
        slots: ChildSlots, clock: any RunnerClock = SystemClock(),
        baseEnvironment: [String: String] = ProcessInfo.processInfo.environment,
        logLimit: Int = CappedLog.defaultLimit, secrets: Secrets = Secrets()
    ) {
        self.secrets = secrets
        self.slots = slots
        self.clock = clock
        self.baseEnvironment = baseEnvironment
        self.logLimit = logLimit
    }

    /// The environment an attempt sees (SPEC 5.2, 5.7).
    /// - Parameter outputFiles: the `JOBRUNNER_OUT_<JOB>_<KEY>_FILE` variables of needed
    ///   outputs too long for the environment (``NeededOutputs``).
    public func environment(
        for request: AttemptRequest, files: (output: String, control: String),
        outputFiles: [String: String] = [:]
    ) -> [String: String] {
        var environment = baseEnvironment
        for (key, value) in request.job.environment { environment[key] = value }
        for (key, value) in request.job.parameters {
            environment["JOBRUNNER_PARAM_" + Self.environmentName(key)] = value.environmentText
        }
        for (name, value) in NeededOutputs(request.neededOutputs).inline { environment[name] = value }
        for (name, path) in outputFiles { environment[name] = path }
        environment["JOBRUNNER_RUN"] = request.runID
        environment["JOBRUNNER_JOB"] = request.job.id
        environment["JOBRUNNER_ATTEMPT"] = String(request.attempt)
        environment["JOBRUNNER_PIPELINE"] = request.job.pipeline
        environment["JOBRUNNER_OUTPUT"] = files.output
        environment["JOBRUNNER_CONTROL"] = files.control
        return environment
    }

    /// Upper case, every character other than A-Z and 0-9 as `_` (SPEC 5.7).
    public static func environmentName(_ text: String) -> String { EnvironmentName.of(text) }

    /// Runs one attempt and turns how its process ended into the attempt's result (SPEC 5.2).
    ///
    /// The attempt takes its turn in ``slots`` first, before it makes its directory, files and
    /// environment: under `serve`, 10,000 occurrences falling due together start 10,000 attempts
    /// at once, and each one waiting with its environment (a copy of the runner's) and the
    /// frame of the whole attempt held about 10 KB; waiting here, its task holds about 3 KB.
    public func run(_ request: AttemptRequest) async -> AttemptResult {
        await slots.withSlot { await runHoldingSlot(request) }
    }

    /// ``run(_:)`` once the attempt holds a slot: its child starts without waiting for another.
    private func runHoldingSlot(_ request: AttemptRequest) async -> AttemptResult {
        let program: ChildProcess.Program
        let arguments: [String]
        switch request.job.handler {
        case .shell(let command):
            program = .path("/bin/sh")
            arguments = ["-c", command]
        case .argv(let argv):
            let first = argv.first ?? ""
            program = first.contains("/") ? .path(first) : .name(first)
            arguments = Array(argv.dropFirst())
        case .plugin(let plugin, let handler):
            let log = CappedLog(path: request.logPath, limit: logLimit, masker: secrets.masker)
            log.appendLine("jobrunner: plugin handler \(plugin).\(handler) cannot run in the shell handler")
            log.finish()
            return AttemptResult(.cannotStart(.notForHandler("shell")))
        }
        let fresh: Bool
        do {
            fresh = try directories.ensure(request.workDirectory)
        } catch {
            return AttemptResult(
                .cannotStart(.workDirectory(path: request.workDirectory, error: "\(error)")))
        }
        var files = AttemptFiles(
            directory: request.workDirectory, job: request.job.id, attempt: request.attempt)
        // Only a directory an earlier runner made can hold files left at these paths.
        if !fresh { files.clear() }
        defer { files.remove() }
        let log = CappedLog(path: request.logPath, limit: logLimit, masker: secrets.masker)
        var result = await run(
            request, program: program, arguments: arguments, files: &files, fresh: fresh, log: log)
        log.finish()
        // A log that could not be written (a full disk) is said in the attempt's record.
        result.logProblem = log.problem
        return result
    }

    /// The attempt's process, once its files and log are ready.
    private func run(
        _ request: AttemptRequest, program: ChildProcess.Program, arguments: [String],
        files: inout AttemptFiles,
        fresh: Bool, log: CappedLog
    ) async -> AttemptResult {
        let outputFiles: [String: String]
        do {
            outputFiles = try NeededOutputs(request.neededOutputs).writeFiles(in: files.neededDirectory)
        } catch {
            log.appendLine("jobrunner: cannot pass the outputs of needed jobs: \(error)")
            return AttemptResult(.cannotStart(.neededOutputs("\(error)")))
        }
        defer { if !outputFiles.isEmpty || !fresh { NeededOutputs.remove(files.neededDirectory) } }
        let child = ChildProcess(
            program: program, arguments: arguments,
            environment: environment(
                for: request, files: (files.outputPath, files.controlPath), outputFiles: outputFiles),
            workingDirectory: request.job.workingDirectory, output: .stream { log.append($0) },
            teardown: Teardown(job: request.job), clock: clock,
            mark: ProcessGroups.attemptMark(
                runID: request.runID, jobID: request.job.id, attempt: request.attempt))
        let outcome = await child.run(onSpawn: request.onSpawn)

        switch outcome.termination {
        case .failedToStart(let reason):
            log.appendLine("jobrunner: cannot start \(request.job.handler.displayName): \(reason)")
            return AttemptResult(.cannotStart(.command(reason)))
        case .stopped(let stop):
            return AttemptResult(stop.end)
        case .exited(0):
            let control = files.readControl()
            if let size = control.tooLarge {
                log.appendLine("jobrunner: \(AttemptFiles.OutputsError.controlTooLarge(size))")
                return AttemptResult(
                    .refused(.controlTooLarge(written: size, limit: AttemptFiles.controlLimit)), exitCode: 0)
            }
            switch files.readOutputs() {
            case .failure(let error):
                return AttemptResult(.refused(error.refusal), exitCode: 0)
            case .success(let outputs):
                if let reason = control.skip {
                    return AttemptResult(.skipped(reason), exitCode: 0, outputs: outputs)
                }
                return AttemptResult(.succeeded, exitCode: 0, outputs: outputs)
            }
        case .exited(let code):
            return AttemptResult(.exited(code), retryAfter: Self.retryAfter(&files, log: log))
        case .signalled(let signal):
            return AttemptResult(.signalled(signal), retryAfter: Self.retryAfter(&files, log: log))
        }
    }
}

extension ShellHandler {
    /// The delay a failed attempt asked for; a line that could not be read says so in its log.
    fileprivate static func retryAfter(_ files: inout AttemptFiles, log: CappedLog) -> Duration? {
        let control = files.readControl()
        for problem in control.ignored { log.appendLine("jobrunner: \(problem)") }
        return control.retryAfter
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

/// Directories already made, so each run's directory is created once, not once per attempt.
/// Forgotten past a bound: under `serve` each occurrence is a run with a directory of its own,
/// and a set of every one would grow for as long as the server lives.
private final class KnownDirectories: Sendable {
    private static let limit = 1_024
    /// Each directory, and whether this process made it.
    private let made = Locked<[String: Bool]>([:])

    /// Makes `path` (owner only) when missing; true when this process made it, so that no
    /// earlier runner can have left files in it. A forgotten directory counts as found.
    func ensure(_ path: String) throws -> Bool {
        if let fresh = made.withLock({ $0[path] }) { return fresh }
        var fresh = mkdir(path, 0o700) == 0
        if fresh {
            // Owner only whatever the umask, like createDirectory's attributes below.
            chmod(path, 0o700)
        } else if errno != EEXIST {
            // A missing parent (the state directory's logs), or an error worded by Foundation.
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            fresh = true
        }
        made.withLock {
            if $0.count >= Self.limit { $0.removeAll(keepingCapacity: true) }
            // Two attempts may race to make it: whichever made it says it is this process's.
            $0[path] = fresh || $0[path] == true
        }
        return fresh
    }
}
