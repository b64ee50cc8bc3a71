import ArgumentParser
import Dispatch
import Foundation
import Glibc
import JobRunnerCore
import JobRunnerShell
import JobRunnerYAML
import Logging

/// `jobrunner run [PATH…]`: validate, then run until every job of the run is final.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the jobs, resuming an interrupted run of the same jobs.",
        discussion: """
            Exit status: 0 every job succeeded or was skipped; 1 a job failed, was blocked or cancelled; \
            2 invalid job files, nothing ran; 3 the state directory could not be used; 130/143 stopped by \
            SIGINT/SIGTERM after a clean stop.
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var session: SessionOptions

    @Flag(help: "Start a fresh run even if an interrupted run of the same jobs could be resumed.")
    var new = false

    @Option(
        parsing: .upToNextOption,
        help: ArgumentHelp(
            "Run only these jobs and the jobs they need (after the paths; several, or comma-separated).",
            valueName: "job"))
    var only: [String] = []

    func validate() throws {
        try session.check()
        // `--only ,` or `--only ""` names no job: refused, rather than read as "every job".
        if !only.isEmpty && names.isEmpty {
            throw ValidationError(
                "--only names no job (\(only.map { "'\($0)'" }.joined(separator: " "))); give job ids, comma-separated or after --only"
            )
        }
    }

    /// The jobs `--only` names, its commas split.
    private var names: [String] { only.flatMap { $0.split(separator: ",").map(String.init) } }

    func run() async throws {
        let summary = try await RunnerSession(global: global, options: session).run(
            serve: false, startNew: new, only: names)
        if let signal = summary.stopSignal { throw ExitCode(128 + signal) }
        let succeeded = summary.state == .succeeded && summary.failedOccurrences == 0
        throw succeeded ? ExitCode.success : ExitCode(ExitStatus.failed)
    }

    /// The closing summary's list (SPEC 4): each job that failed, was blocked or cancelled, why, and
    /// the `jobrunner logs` command that shows the log behind it (a blocked job's is the log of
    /// the job that failed first on its way).
    static func troubles(_ summary: RunSummary, state: String?) -> String {
        let records = Dictionary(summary.troubled.map { ($0.jobID, $0) }) { first, _ in first }
        let stateOption = state.map { " --state \(shellQuoted($0))" } ?? ""
        return summary.troubled.map { record in
            let word = record.isAllowedFailure ? "failed (allowed)" : record.state.rawValue
            let reason = record.reason.map { ": " + VisibleText.escaped($0.words) } ?? ""
            var culprit = record
            var seen: Set<String> = [record.jobID]
            while culprit.state == .blocked, case .ended(.blockedBy(let need)) = culprit.reason,
                let next = records[need], seen.insert(need).inserted
            {
                culprit = next
            }
            let hint =
                culprit.attempts > 0
                ? "  (see: jobrunner logs \(shellQuoted(culprit.jobID))\(stateOption))" : ""
            return "  \(record.jobID) \(word)\(reason)\(hint)\n"
        }.joined()
    }

    private static func shellQuoted(_ text: String) -> String {
        let plain = text.allSatisfy { $0.isLetter || $0.isNumber || "-_./:=@".contains($0) }
        return plain && !text.isEmpty ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// `JOBRUNNER_ONLINE` forces the answer; else the job files' probe; else the built-in check.
    static func probe(for workload: Workload) -> any ConnectivityProbe {
        switch ProcessInfo.processInfo.environment["JOBRUNNER_ONLINE"] {
        case "1": return FixedProbe(online: true)
        case "0": return FixedProbe(online: false)
        default: break
        }
        let settings = workload.connectivity
        guard let command = settings.probe else { return SystemProbe() }
        return CommandProbe(
            command: command, workingDirectory: settings.workingDirectory,
            timeLimit: min(settings.interval, .seconds(30)))
    }

    static func describe(_ summary: RunSummary, seconds: Double) -> String {
        let order: [JobState] = [
            .succeeded, .skipped, .failed, .blocked, .cancelled, .waiting, .pending, .running,
        ]
        let allowed = summary.allowedFailures
        var counts = order.compactMap { state -> String? in
            let count = (summary.counts[state] ?? 0) - (state == .failed ? allowed : 0)
            return count > 0 ? "\(count) \(state.rawValue)" : nil
        }
        if allowed > 0 {
            counts.insert(
                "\(allowed) failed (allowed)",
                at: counts.firstIndex { $0.hasSuffix(" blocked") } ?? counts.count)
        }
        let verb: String
        switch summary.state {
        case .succeeded: verb = "succeeded"
        case .failed: verb = "failed"
        case .stopped: verb = "stopped"
        case .running: verb = "is running"
        case .skipped: verb = "was skipped"
        case .missed: verb = "was missed"
        }
        let resumed = summary.resumed ? " (resumed)" : ""
        let occurrences =
            summary.failedOccurrences == 0
            ? ""
            : "; \(summary.failedOccurrences) periodic occurrence\(summary.failedOccurrences == 1 ? "" : "s") failed (jobrunner runs)"
        // A stopped run is resumed by the next run of the same jobs (SPEC 5.9): said where the
        // person who pressed Ctrl-C looks.
        let next =
            summary.state == .stopped
            ? "; `jobrunner run` with the same job files resumes it (--new starts afresh)" : ""
        return "run \(summary.runID)\(resumed) \(verb) in \(Timestamps.elapsed(seconds)): "
            + (counts.isEmpty ? "no jobs" : counts.joined(separator: ", ")) + occurrences + next
    }
}

/// Turns SIGINT and SIGTERM into calls, instead of the default of dying on the spot.
final class SignalForwarder {
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "jobrunner.signals")
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
