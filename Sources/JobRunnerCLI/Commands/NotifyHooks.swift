import Foundation
import JobRunnerCore
import JobRunnerShell

/// Runs `notify:` hooks for a runner (SPEC 5.13): the hook's command from its file's directory,
/// with `JOBRUNNER_NOTIFY_RUN`, `_STATE`, `_JOB`, `_FAILED` and `_SUMMARY` (a file holding the
/// run's `status --json`), or its plugin's handler with the same in its request (`notify`);
/// each attempt within the hook's timeout; its output, secrets masked, kept in
/// `logs/RUN/.notify/NAME.log` (`jobrunner logs --notify NAME`).
struct ShellNotifier: NotificationDeliverer {
    let reader: ReadModel
    let logDirectory: String
    let secrets: Secrets
    let environment: [String: String]
    /// What a plugin hook's handler is called through: the runner's own handlers, so that its
    /// `isolation` means what it means for a job.
    var plugins: (any JobHandler)?

    /// Where a hook's output and summary of a run are kept.
    static func folder(in logDirectory: String, runID: String) -> String {
        "\(logDirectory)/\(runID)/.notify"
    }

    func deliver(_ hook: NotifyHook, runID: String) async -> String? {
        let folder = Self.folder(in: logDirectory, runID: runID)
        try? FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let masker = secrets.masker
        let summaryPath = "\(folder)/\(hook.name).json"
        var state = ""
        var job = ""
        var failed: [String] = []
        if let view = try? await reader.runView(runID: runID, all: true, countsUnlisted: false) {
            var bytes: [UInt8] = []
            StatusReport(view: view, describing: false).writeJSON { bytes += $0 }
            let text = masker.mask(String(decoding: bytes, as: UTF8.self))
            _ = FileManager.default.createFile(
                atPath: summaryPath, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
            state = view.run.state.rawValue
            job = view.run.occurrenceOf ?? ""
            failed = view.run.jobIDs.filter { view.overview.jobs[$0]?.failsRun == true }
        }
        var env = environment
        env["JOBRUNNER_NOTIFY_RUN"] = runID
        env["JOBRUNNER_NOTIFY_STATE"] = state
        env["JOBRUNNER_NOTIFY_JOB"] = job
        env["JOBRUNNER_NOTIFY_FAILED"] = failed.joined(separator: " ")
        env["JOBRUNNER_NOTIFY_SUMMARY"] = summaryPath
        let directory = hook.location.map { ($0.file as NSString).deletingLastPathComponent }
        let logPath = "\(folder)/\(hook.name).log"
        let (program, arguments): (ChildProcess.Program, [String])
        switch hook.command {
        case .shell(let command): (program, arguments) = (.path("/bin/sh"), ["-c", command])
        case .argv(let argv): (program, arguments) = (.name(argv.first ?? ""), Array(argv.dropFirst()))
        case .plugin:
            let notification = HookNotification(
                run: runID, state: state, job: job, failed: failed, summary: summaryPath)
            return await callPlugin(
                hook, notification: notification, logPath: logPath, folder: folder, directory: directory)
        }
        var log = Data()
        var failure: String?
        for attempt in 1...max(1, hook.attempts) {
            let outcome = await ChildProcess(
                program: program, arguments: arguments, environment: env,
                workingDirectory: directory?.isEmpty == false ? directory : nil,
                output: .keep(lastBytes: 1 << 20), teardown: Teardown(timeout: hook.timeout),
                clock: SystemClock()
            ).run()
            if hook.attempts > 1 { log += Data("--- attempt \(attempt) of \(hook.attempts)\n".utf8) }
            log += Data(masker.mask(String(decoding: outcome.output, as: UTF8.self)).utf8)
            _ = FileManager.default.createFile(
                atPath: logPath, contents: log, attributes: [.posixPermissions: 0o600])
            switch outcome.termination {
            case .exited(0): return nil
            case .exited(let code): failure = "exit \(code)"
            case .signalled(let signal): failure = "killed by signal \(signal)"
            case .stopped(.timedOut): failure = "timed out after \(JobDuration.format(hook.timeout))"
            case .stopped: return "the runner stopped"
            case .failedToStart(let why): failure = "cannot start: \(why)"
            }
            if Task.isCancelled { return "the runner stopped" }
        }
        return failure
    }

    /// A plugin hook's delivery: its handler called through the runner's handlers, up to the
    /// hook's attempts, each within its timeout; the log masked once the calls are over.
    private func callPlugin(
        _ hook: NotifyHook, notification: HookNotification, logPath: String, folder: String,
        directory: String?
    ) async -> String? {
        guard let plugins else { return "this runner calls no plugins" }
        let job = JobDefinition(
            id: hook.name, handler: hook.command, parameters: hook.parameters,
            workingDirectory: directory?.isEmpty == false ? directory ?? folder : folder,
            timeout: hook.timeout,
            location: hook.location ?? SourceLocation(file: "<notify>", line: 1, column: 1),
            isolation: hook.isolation, pluginLocations: hook.pluginLocations)
        defer { maskLog(at: logPath) }
        var failure: String?
        for attempt in 1...max(1, hook.attempts) {
            if hook.attempts > 1 { appendLine("--- attempt \(attempt) of \(hook.attempts)", to: logPath) }
            var request = AttemptRequest(
                runID: notification.run, job: job, attempt: attempt, logPath: logPath, workDirectory: folder,
                neededOutputs: [:])
            request.notification = notification
            let result = await plugins.run(request)
            switch result.outcome {
            case .succeeded, .skipped: return nil
            case .interrupted: return "the runner stopped"
            case .failed, .timeout, .tempfail: failure = result.end.words
            }
            if Task.isCancelled { return "the runner stopped" }
        }
        return failure
    }

    private func appendLine(_ line: String, to path: String) {
        guard let handle = FileHandle(forWritingAtPath: path) else {
            _ = FileManager.default.createFile(
                atPath: path, contents: Data((line + "\n").utf8), attributes: [.posixPermissions: 0o600])
            return
        }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: Data((line + "\n").utf8))
    }

    /// A plugin writes its log itself: secrets are masked in it afterwards.
    private func maskLog(at path: String) {
        guard let data = FileManager.default.contents(atPath: path) else { return }
        let text = String(decoding: data, as: UTF8.self)
        let masked = secrets.masker.mask(text)
        guard masked != text else { return }
        _ = FileManager.default.createFile(
            atPath: path, contents: Data(masked.utf8), attributes: [.posixPermissions: 0o600])
    }
}
