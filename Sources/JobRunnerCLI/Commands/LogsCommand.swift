import ArgumentParser
import Foundation
import Glibc
import JobRunnerCore

/// `jobrunner logs [JOB] [--attempt N] [--run ID] [-f]`.
struct LogsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logs",
        abstract: "Print one attempt's output (the latest attempt unless --attempt is given).",
        discussion: """
            Without a job, prints the latest attempt of every job of the run, each line prefixed by \
            its job; with -f, follows the whole run until it ends. With -f and a job that has not \
            started, waits for it. Following ends, with a message, when the runner that writes the \
            log is gone.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The job's id; none: every job of the run.")
    var job: String?

    @Option(help: ArgumentHelp("Which attempt, counting from 1.", valueName: "n"))
    var attempt: Int?

    @Option(
        name: .customLong("run"), help: ArgumentHelp("A run other than the current one.", valueName: "id"))
    var runID: String?

    @Option(
        name: .customLong("notify"),
        help: ArgumentHelp(
            "The output of this notify: hook instead (its latest delivery, or the one for --run).",
            valueName: "name"))
    var notify: String?

    @Flag(name: [.short, .long], help: "Keep printing new output until the attempt (or the run) ends.")
    var follow = false

    /// How often a followed log and the run's records are looked at: another process writes
    /// them, so there is nothing to await.
    static let pollInterval = Duration.milliseconds(200)

    func validate() throws {
        if notify != nil, job != nil || attempt != nil || follow {
            throw ValidationError("--notify takes no job, --attempt or -f")
        }
        if job == nil, attempt != nil { throw ValidationError("--attempt needs a job") }
        if let attempt, attempt < 1 { throw ValidationError("--attempt counts from 1, not \(attempt)") }
    }

    func run() async throws {
        do {
            try await printLogs()
        } catch let closed as OutputClosed {
            // The reader went away (`| head`): nothing more to do, as for `cat`. Another failure
            // to write is said, to standard error.
            guard closed.code != EPIPE else { return }
            printError(
                "jobrunner: cannot write the log to standard output: \(String(cString: strerror(closed.code))); check where it goes"
            )
            throw ExitCode(ExitStatus.failed)
        }
    }

    private func printLogs() async throws {
        let stateDirectory = global.stateDirectory
        guard stateDirectory.hasDatabase else {
            printError("jobrunner: no runs yet in \(stateDirectory.path)")
            throw ExitCode(ExitStatus.failed)
        }
        if let notify { return try await printNotifyLog(notify, stateDirectory) }
        let (store, current) = try await openRun(stateDirectory, runID: runID)
        defer { store.close() }
        let reader = store.reader
        var snapshot = current
        // A periodic job is in none of the runs of one-shot jobs: its latest occurrence that ran
        // is meant (SPEC 5.12).
        if runID == nil, let job, snapshot.jobs[job] == nil,
            let (latest, ran) = (try? await reader.latestOccurrence(of: job)) ?? nil, ran,
            let occurrence = (try? await reader.snapshot(runID: latest.id)) ?? nil
        {
            snapshot = occurrence
        }
        guard let job else {
            if snapshot.attempts.isEmpty, let words = OccurrenceWords.withoutAttempt(snapshot.run) {
                printError("jobrunner: " + words)
                throw ExitCode(ExitStatus.failed)
            }
            try await RunLogs(reader: reader, runID: snapshot.run.id)
                .print(follow: follow)
            return
        }
        guard snapshot.jobs[job] != nil else {
            let matches = MatrixIDs.jobs(of: job, in: snapshot.run.jobIDs)
            if !matches.isEmpty {
                printError(
                    "jobrunner: run \(snapshot.run.id) has "
                        + MatrixIDs.choice(of: job, among: matches, command: "logs"))
                throw ExitCode(ExitStatus.failed)
            }
            printError("jobrunner: " + (await OccurrenceWords.noJob(job, in: snapshot.run, reader: reader)))
            throw ExitCode(ExitStatus.failed)
        }
        let chosen = try await chooseAttempt(of: job, in: snapshot, reader: reader)
        let path = reader.logPath(of: chosen, runID: snapshot.run.id)
        if path.contains("/\(Scheduler.constraintLogFolder)/") {
            printError(
                "jobrunner: attempt \(chosen.number) of \(job) \(chosen.reason ?? "failed"); the output of the constraint's last satisfy in this run:"
            )
        }
        var offset = try LogFile.copy(path: path, from: 0)
        guard follow, chosen.outcome == nil else {
            if let problem = chosen.logProblem {
                printError(
                    "jobrunner: attempt \(chosen.number) of \(job): \(problem); what it printed is not all here"
                )
            } else if offset == 0 {
                explainEmpty(chosen, job: job)
            }
            return
        }
        while true {
            try await Task.sleep(for: Self.pollInterval)
            offset = try LogFile.copy(path: path, from: offset)
            let current = try? await reader.snapshot(runID: snapshot.run.id)?.attempts[job]?.first {
                $0.number == chosen.number
            }
            if let current, current.outcome != nil {
                _ = try LogFile.copy(path: path, from: offset)
                if let problem = current.logProblem {
                    printError(
                        "jobrunner: attempt \(current.number) of \(job): \(problem); what it printed is not all here"
                    )
                }
                return
            }
            if await reader.runnerPID() == nil {
                _ = try LogFile.copy(path: path, from: offset)
                printError(
                    "jobrunner: the runner that wrote this log is gone and attempt \(chosen.number) of \(job) never ended; the next `jobrunner run` resumes the run"
                )
                throw ExitCode(ExitStatus.failed)
            }
        }
    }

    /// A `notify:` hook's output (SPEC 5.13): of the run `--run` names, else of the latest run
    /// it was delivered for.
    private func printNotifyLog(_ name: String, _ stateDirectory: StoreOpener) async throws {
        let logs = stateDirectory.logs.logsPath
        func path(_ runID: String) -> String { "\(ShellNotifier.folder(in: logs, runID: runID))/\(name).log" }
        var chosen = runID
        if chosen == nil {
            let store = try await stateDirectory.openForReading()
            defer { store.close() }
            let runs = (try? await store.reader.runs()) ?? []
            chosen =
                runs.sorted { $0.startedAt > $1.startedAt }.first {
                    FileManager.default.fileExists(atPath: path($0.id))
                }?.id
        }
        guard let chosen, FileManager.default.fileExists(atPath: path(chosen)) else {
            // Said where it looked and what to do: "there" left the reader to guess which.
            let which = runID.map { " for run \($0)" } ?? ""
            printError(
                "jobrunner: notify hook '\(name)' has no output\(which) in the state directory \(stateDirectory.path): "
                    + "it has not run there yet (a hook runs when a run or occurrence ends in a state its `on:` lists; "
                    + "one that fell due while no runner was there runs at the next `jobrunner run` or `serve`), "
                    + "or no hook is named '\(name)' (see notify: in the job files); --state DIR reads another state directory"
            )
            throw ExitCode(ExitStatus.failed)
        }
        _ = try LogFile.copy(path: path(chosen), from: 0)
    }

    /// The attempt asked for, or the latest; with `-f`, waits for the first one to start.
    private func chooseAttempt(
        of job: String, in snapshot: RunSnapshot, reader: ReadModel
    ) async throws -> AttemptRecord {
        var attempts = snapshot.attempts[job] ?? []
        if let attempt {
            guard let found = attempts.first(where: { $0.number == attempt }) else {
                printError("jobrunner: job '\(job)' has no attempt \(attempt); it has \(attempts.count)")
                throw ExitCode(ExitStatus.failed)
            }
            return found
        }
        if let last = attempts.last { return last }
        let state = snapshot.jobs[job]?.state ?? .pending
        if state.isFinal {
            let reason = snapshot.jobs[job]?.reason.map { " (\($0.words))" } ?? ""
            printError(
                "jobrunner: job '\(job)' is \(state.rawValue)\(reason) and never started: it has no log")
            throw ExitCode(ExitStatus.failed)
        }
        guard follow else {
            printError(
                "jobrunner: job '\(job)' has not started yet in run \(snapshot.run.id); `jobrunner logs -f \(job)\(snapshot.run.occurrenceOf == nil ? "" : " --run \(snapshot.run.id)")` waits for it"
            )
            throw ExitCode(ExitStatus.failed)
        }
        printError("jobrunner: waiting for \(job) to start…")
        while true {
            if await reader.runnerPID() == nil {
                printError(
                    "jobrunner: no runner works on run \(snapshot.run.id), so \(job) does not start; `jobrunner run` starts it"
                )
                throw ExitCode(ExitStatus.failed)
            }
            try await Task.sleep(for: Self.pollInterval)
            let current = try? await reader.snapshot(runID: snapshot.run.id)
            attempts = current?.attempts[job] ?? []
            if let first = attempts.last { return first }
            if let record = current?.jobs[job], record.state.isFinal {
                printError(
                    "jobrunner: job '\(job)' ended \(record.state.rawValue) without starting: it has no log")
                throw ExitCode(ExitStatus.failed)
            }
        }
    }

    /// An attempt that wrote nothing still gets a line: what became of it.
    private func explainEmpty(_ attempt: AttemptRecord, job: String) {
        let ended =
            attempt.outcome.map { outcome in
                "it ended \(outcome.rawValue)" + (attempt.reason.map { " (\($0))" } ?? "")
            } ?? "it is still running"
        printError("jobrunner: attempt \(attempt.number) of \(job) wrote no output; \(ended)")
    }
}

/// Copying a log file that may still grow.
enum LogFile {
    /// Copies the file from `offset` to standard output, a piece at a time; returns the new
    /// offset.
    /// - Throws: ``OutputClosed`` when standard output cannot be written (`| head` went away).
    static func copy(path: String, from offset: UInt64) throws(OutputClosed) -> UInt64 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return offset }
        defer { close(fd) }
        var offset = offset
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return offset }
            try OutputClosed.write(buffer[0..<count])
            offset += UInt64(count)
        }
    }
}
