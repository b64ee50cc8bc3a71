import Foundation
import JobRunnerCore

extension ChildProcess {
    /// At most this much of a short command's output is kept: its last lines are what a
    /// reason quotes, and a chatty command must not fill the runner's memory.
    static let shortCommandOutput = 64 << 10

    /// A short helper command (connectivity probe, constraint check or satisfy): `/bin/sh -c`
    /// from `directory`, stdout and stderr kept together, ended when it outlives `limit`.
    static func shortCommand(
        _ command: String, in directory: String?, limit: Duration, clock: any RunnerClock
    ) -> ChildProcess {
        ChildProcess(
            program: .path("/bin/sh"), arguments: ["-c", command], workingDirectory: directory,
            output: .keep(lastBytes: shortCommandOutput), timeout: limit, clock: clock)
    }

    /// A short command whose shell first appends `PID -` (a ``SatisfyProcess`` without a start
    /// time) to the file at `record`, then becomes the command's shell (`exec`: same pid, same
    /// group): the record exists before the command does anything, however long the runner
    /// takes to learn the pid. It appends, so that a runner that wrote the whole record with the
    /// start time first keeps it: only the first line is read. A record that cannot be written
    /// does not stop the command.
    static func shortCommand(
        _ command: String, in directory: String?, limit: Duration, clock: any RunnerClock,
        recordingPIDIn record: String
    ) -> ChildProcess {
        ChildProcess(
            program: .path("/bin/sh"),
            arguments: [
                "-c", #"{ echo "$$ -" >> "$0"; } 2>/dev/null; exec /bin/sh -c "$1""#, record, command,
            ],
            workingDirectory: directory, output: .keep(lastBytes: shortCommandOutput), timeout: limit,
            clock: clock)
    }
}

extension ChildProcess.Outcome {
    /// Whether the command exited 0 by itself.
    var succeeded: Bool { termination == .exited(0) }

    /// The last non-empty line of output, trimmed to 200 characters: what a failed command
    /// most likely says about why.
    var lastLine: String {
        let text = String(decoding: output, as: UTF8.self)
        let line = text.split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
        return String(line.trimmingCharacters(in: .whitespaces).prefix(200))
    }
}
