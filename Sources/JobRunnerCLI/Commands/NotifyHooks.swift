import Foundation
import JobRunnerCore
import JobRunnerShell

/// Runs `notify:` hooks for a runner (SPEC 5.13): the hook's command from its file's directory,
/// with `JOBRUNNER_NOTIFY_RUN`, `_STATE`, `_JOB`, `_FAILED` and `_SUMMARY` (a file holding the
/// run's `status --json`), each attempt within the hook's timeout; its output, secrets masked,
/// kept in `logs/RUN/.notify/NAME.log` (`jobrunner logs --notify NAME`).
struct ShellNotifier: NotificationDeliverer {
    let reader: ReadModel
    let logDirectory: String
    let secrets: Secrets
    let environment: [String: String]

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
        let (program, arguments): (ChildProcess.Program, [String])
        switch hook.command {
        case .shell(let command): (program, arguments) = (.path("/bin/sh"), ["-c", command])
        case .argv(let argv): (program, arguments) = (.name(argv.first ?? ""), Array(argv.dropFirst()))
        case .plugin: return "plugin hooks are not supported by this build"
        }
        let logPath = "\(folder)/\(hook.name).log"
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
}
