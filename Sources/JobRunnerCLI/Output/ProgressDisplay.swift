import Dispatch
import Foundation
import Glibc
import JobRunnerCore

/// `--progress plain`: one line per transition; under a `failed` line, the end of the
/// attempt's log. The lines of one batch of the runner's messages go out in one `write`.
final class PlainProgress: RunObserver, Sendable {
    private let logs: LogTail
    private let pending: PendingOutput
    private let waits = WaitAnnouncements()

    init(fd: Int32, logs: LogTail) {
        self.pending = PendingOutput(fd: fd)
        self.logs = logs
    }

    deinit { pending.flush() }

    func flush() { pending.flush() }

    func opened(_ run: OpenedRun) {
        guard let line = Self.line(for: run) else { return }
        pending.append(Timestamps.clock(run.time) + " " + line + "\n")
    }

    /// The first line of a resumed run (SPEC 5.9); nil for a new run.
    static func line(for run: OpenedRun) -> String? {
        guard run.resumed else { return nil }
        return "resuming    run \(run.runID): \(run.finalJobs) of \(run.totalJobs) jobs final already"
    }

    func missed(jobID: String, count: Int, catchUp: CatchUp, time: Date) {
        pending.append(
            Timestamps.clock(time) + " " + VisibleText.escaped(Self.missedLine(jobID, count, catchUp)) + "\n")
    }

    /// One line for a job's occurrences missed during downtime (SPEC 5.12).
    static func missedLine(_ jobID: String, _ count: Int, _ catchUp: CatchUp) -> String {
        "missed      \(count) occurrence\(count == 1 ? "" : "s") of \(jobID) (catchUp: \(catchUp.rawValue))"
    }

    func record(_ event: RunEvent) {
        guard waits.shows(event), let line = Self.line(for: event) else { return }
        // Reasons carry what jobs wrote (a skip reason, a malformed output line): shown with
        // their control characters escaped, so a job cannot drive the terminal.
        var text = Timestamps.clock(event.time) + " " + VisibleText.escaped(line) + "\n"
        if event.kind == .failed, let job = event.job, let attempt = event.attempt {
            text += LogTail.indented(logs.lines(run: event.run, job: job, attempt: attempt))
        }
        pending.append(text)
    }

    /// The words for one event, or nil for events that only the events file carries.
    static func line(for event: RunEvent) -> String? {
        // An occurrence is named with its scheduled time: `tick @ 19:07:15` (SPEC 5.12).
        let job = (event.job ?? "") + (event.occurrence.map { " @ " + Timestamps.clock($0) } ?? "")
        let attempt = event.attempt.map { " (attempt \($0))" } ?? ""
        func pad(_ word: String) -> String { word + String(repeating: " ", count: max(0, 12 - word.count)) }
        switch event.kind {
        case .waiting where event.job == nil:
            // The run cannot go on: only a suspended pipeline holds it back.
            let pipeline = event.pipeline ?? ""
            return pad("waiting") + "pipeline \(pipeline) is suspended and nothing else can run; "
                + "`jobrunner resume \(pipeline)` lets it go on"
        case .waiting:
            // Announced once (``WaitAnnouncements``): the internet, a constraint.
            return WaitAnnouncements.words(for: event).map { pad("waiting") + job + ": " + $0 }
        case .queued, .output, .runFinished: return nil
        case .notifyStarted: return pad("notify") + (event.hook ?? "") + " for run \(event.run)"
        case .notifySucceeded: return pad("notified") + (event.hook ?? "") + " for run \(event.run)"
        case .notifyFailed:
            return pad("notify") + (event.hook ?? "") + " for run \(event.run) failed"
                + (event.reason.map { ": \($0)" } ?? "")
        case .started: return pad("started") + job + attempt
        case .succeeded: return pad("succeeded") + job + attempt
        case .failed: return pad("failed") + job + attempt + ": " + (event.reason ?? "failed")
        case .retrying:
            return pad("retrying") + job + " in " + JobDuration.format(event.delay ?? .zero)
        case .skipped: return pad("skipped") + job + (event.reason.map { ": \($0)" } ?? "")
        case .blocked: return pad("blocked") + job + (event.reason.map { ": \($0)" } ?? "")
        case .cancelled: return pad("cancelled") + job + (event.reason.map { ": \($0)" } ?? "")
        case .interrupted: return pad("interrupted") + job + attempt + (event.reason.map { ": \($0)" } ?? "")
        // A start refused because the job's occurrence runs: the occurrence is skipped (the
        // event keeps its name, `disabled`, SPEC 5.10).
        case .disabled: return pad("skipped") + job + (event.reason.map { ": \($0)" } ?? "")
        case .suspended:
            // Offline suspensions carry the reason `internet`; an operator's carries none.
            let pipeline = event.pipeline ?? ""
            return pad("suspended") + pipeline
                + (event.reason == WaitingReason.internet.words
                    ? ": offline, until the internet is back"
                    : ": by an operator; `jobrunner resume \(pipeline)` lets it go on")
        case .resumed:
            return pad("resumed") + (event.pipeline ?? "")
                + (event.reason == WaitingReason.internet.words ? ": back online" : "")
        }
    }
}

/// `--progress tty`: finished jobs scroll by above a live board of the running ones with their
/// elapsed time and the counts, redrawn in place every second and once per batch of the
/// runner's messages that changed it (``flush()``).
final class TerminalProgress: RunObserver, @unchecked Sendable {
    // @unchecked: `board` is behind a lock; the timer source is only resumed and cancelled, both
    // thread-safe in Dispatch.
    private struct Board {
        var running: [String: Date] = [:]
        var order: [String] = []
        var done = 0
        var failed = 0
        var drawnLines = 0
        /// Each job's last failed attempt, in the order they failed: their logs' ends are shown
        /// when the run ends.
        var failures: [(run: String, job: String, attempt: Int)] = []
        /// Lines to scroll by above the board at the next redraw, in order.
        var above: [String] = []
        /// Whether anything changed since the board was last drawn.
        var changed = false
    }

    /// How many lines wait at most for a redraw.
    private static let pendingLimit = 1_000

    private let fd: Int32
    private let logs: LogTail
    private let total: Int
    private let board = Locked(Board())
    private let waits = WaitAnnouncements()
    private let timer: any DispatchSourceTimer

    init(fd: Int32, totalJobs: Int, logs: LogTail) {
        self.fd = fd
        self.logs = logs
        self.total = totalJobs
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "jobrunner.progress"))
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [weak self] in self?.redraw() }
        timer.resume()
    }

    deinit { timer.cancel() }

    func opened(_ run: OpenedRun) {
        guard let line = PlainProgress.line(for: run) else { return }
        board.withLock { $0.done += run.finalJobs }
        note(line)
    }

    func record(_ event: RunEvent) {
        guard let job = event.job else {
            if event.kind == .runFinished {
                finish()
            } else if [.waiting, .suspended, .resumed].contains(event.kind), waits.shows(event),
                let line = PlainProgress.line(for: event)
            {
                note(line)
            }
            return
        }
        if event.kind == .waiting {
            if waits.shows(event), let line = PlainProgress.line(for: event) { note(line) }
            return
        }
        var line: String?
        board.withLock { board in
            switch event.kind {
            case .started:
                board.running[job] = event.time
                board.order.append(job)
            case .succeeded, .skipped, .failed, .interrupted, .cancelled, .blocked, .retrying:
                if let started = board.running.removeValue(forKey: job) {
                    board.order.removeAll { $0 == job }
                    if event.kind == .succeeded {
                        line = "✓ \(job) \(Timestamps.elapsed(event.time.timeIntervalSince(started)))"
                    }
                }
                if [.succeeded, .skipped, .blocked].contains(event.kind) { board.done += 1 }
                // Skipped is not success: its own mark, and why.
                if event.kind == .skipped {
                    line = "○ \(job) skipped" + (event.reason.map { ": \($0)" } ?? "")
                }
                if event.kind == .failed {
                    line = "✗ \(job): \(event.reason ?? "failed")"
                    if let attempt = event.attempt {
                        board.failures.removeAll { $0.job == job }
                        board.failures.append((event.run, job, attempt))
                    }
                }
                if event.kind == .blocked { line = "- \(job) blocked: \(event.reason ?? "")" }
            default:
                break
            }
        }
        note(line)
    }

    /// Redraws the board if the batch changed it, with the lines it finished above.
    func flush() {
        if board.withLock({ $0.changed }) { redraw() }
    }

    /// Notes a change of the board, and a line to scroll by above it; redrawn on the next
    /// ``flush()`` (or sooner when many lines wait).
    private func note(_ line: String?) {
        let full = board.withLock { board in
            board.changed = true
            if let line { board.above.append(line) }
            return board.above.count >= Self.pendingLimit
        }
        if full { redraw() }
    }

    private func finish() {
        timer.cancel()
        board.withLock { board in
            var text = ""
            if board.drawnLines > 0 { text += "\u{1B}[\(board.drawnLines)A\u{1B}[J" }
            for line in board.above { text += VisibleText.escaped(line) + "\n" }
            if !text.isEmpty { writeText(fd, text) }
            board.above = []
            board.changed = false
            board.drawnLines = 0
            for failure in board.failures {
                let lines = logs.lines(run: failure.run, job: failure.job, attempt: failure.attempt)
                guard !lines.isEmpty else { continue }
                writeText(
                    fd,
                    "✗ \(failure.job) (attempt \(failure.attempt)), its log's end:\n"
                        + LogTail.indented(lines))
            }
        }
    }

    private func redraw() {
        board.withLock { board in
            var text = ""
            if board.drawnLines > 0 { text += "\u{1B}[\(board.drawnLines)A\u{1B}[J" }
            // Escaped: the lines carry what jobs wrote; only the board's own sequences reach
            // the terminal as such.
            for line in board.above { text += VisibleText.escaped(line) + "\n" }
            board.above = []
            board.changed = false
            let now = Date()
            var lines: [String] = []
            for job in board.order.prefix(20) {
                let started = board.running[job] ?? now
                lines.append(
                    "  ● \(VisibleText.escaped(job))  \(Timestamps.elapsed(now.timeIntervalSince(started)))")
            }
            if board.order.count > 20 { lines.append("  … and \(board.order.count - 20) more") }
            lines.append("  \(board.running.count) running · \(board.done) of \(total) done")
            text += lines.joined(separator: "\n") + "\n"
            board.drawnLines = lines.count
            writeText(fd, text)
        }
    }
}
