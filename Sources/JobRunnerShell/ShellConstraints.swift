import Foundation
import JobRunnerCore

/// Runs constraints' `check` and `satisfy` commands (SPEC 5.6) as short child processes,
/// each limited to the constraint's `timeout`.
public struct ShellConstraints: ConstraintRunner {
    /// Measures the commands' time limits and grace periods.
    public var clock: any RunnerClock

    /// A runner whose commands' time is measured on `clock`.
    public init(clock: any RunnerClock = SystemClock()) {
        self.clock = clock
    }

    /// Whether `check` exits 0 within the time limit.
    public func check(_ constraint: ConstraintDefinition) async -> Bool {
        await run(constraint.check, of: constraint).succeeded
    }

    /// Runs `satisfy`; a failure carries the line that jobs waiting on it quote.
    public func satisfy(_ constraint: ConstraintDefinition) async -> SatisfyOutcome {
        Self.judge(await run(constraint.satisfy, of: constraint), of: constraint)
    }

    /// Runs `satisfy` and writes its output (the last 64 KiB of it) to `logPath`; its pid and
    /// start time are in the file at `processPath` from its spawn until it has ended.
    public func satisfy(_ constraint: ConstraintDefinition, logPath: String, processPath: String) async
        -> SatisfyOutcome
    {
        for directory in Set([logPath, processPath].map { ($0 as NSString).deletingLastPathComponent }) {
            try? FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        // The shell writes the record; one an earlier satisfy left must not outlive this one's.
        try? FileManager.default.removeItem(atPath: processPath)
        let outcome = await ChildProcess.shortCommand(
            constraint.satisfy, in: constraint.workingDirectory, limit: constraint.timeout, clock: clock,
            recordingPIDIn: processPath
        ).run()
        try? FileManager.default.removeItem(atPath: processPath)
        // A log that cannot be written loses only this copy of the output; the outcome stands.
        // One the runner's stop ended fails nothing: the output of the last one that did stays.
        if outcome.termination != .stopped(.interrupted) {
            _ = FileManager.default.createFile(
                atPath: logPath, contents: Data(outcome.output), attributes: [.posixPermissions: 0o600])
        }
        return Self.judge(outcome, of: constraint)
    }

    private static func judge(_ outcome: ChildProcess.Outcome, of constraint: ConstraintDefinition)
        -> SatisfyOutcome
    {
        let line = outcome.lastLine
        switch outcome.termination {
        case .exited(0):
            return .satisfied
        case .exited(let code):
            return .failed(lastLine: line.isEmpty ? "exit \(code)" : line)
        case .signalled(let signal):
            return .failed(lastLine: line.isEmpty ? "killed by signal \(signal)" : line)
        case .stopped(.timedOut):
            return .failed(lastLine: "timed out after \(JobDuration.format(constraint.timeout))")
        case .failedToStart(let reason):
            return .failed(lastLine: "cannot start: \(reason)")
        case .stopped(.interrupted):
            return .failed(lastLine: "the runner stopped")
        }
    }

    private func run(_ command: String, of constraint: ConstraintDefinition) async -> ChildProcess.Outcome {
        await ChildProcess.shortCommand(
            command, in: constraint.workingDirectory, limit: constraint.timeout, clock: clock
        ).run()
    }
}
