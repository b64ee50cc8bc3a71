import ArgumentParser
import Dispatch
import Foundation
import Glibc
import JobRunnerCore
import JobRunnerLMDB
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

    func validate() throws { try session.check() }

    func run() async throws {
        let summary = try await RunnerSession(global: global, options: session).run(
            serve: false, startNew: new)
        if let signal = summary.stopSignal { throw ExitCode(128 + signal) }
        let succeeded = summary.state == .succeeded && summary.failedOccurrences == 0
        throw succeeded ? ExitCode.success : ExitCode(ExitStatus.failed)
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
        let counts = order.compactMap { state in summary.counts[state].map { "\($0) \(state.rawValue)" } }
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
        return "run \(summary.runID)\(resumed) \(verb) in \(Timestamps.elapsed(seconds)): "
            + (counts.isEmpty ? "no jobs" : counts.joined(separator: ", ")) + occurrences
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
