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
            output: .keep(lastBytes: shortCommandOutput), teardown: Teardown(timeout: limit),
            clock: clock)
    }

    /// A short command whose shell first writes its ``SatisfyProcess`` (`PID STARTTIME`, the
    /// start time read from its own `/proc/PID/stat`; `PID -` when that cannot be read) to the
    /// file at `record`, then becomes the command's shell (`exec`: same pid, same group, same
    /// start time). The shell is the record's only writer, and it writes before the command
    /// does anything: a runner killed at any moment after the spawn leaves a record the next
    /// one can check against a reused pid. A record that cannot be written does not stop the
    /// command.
    static func shortCommand(
        _ command: String, in directory: String?, limit: Duration, clock: any RunnerClock,
        recordingPIDIn record: String
    ) -> ChildProcess {
        ChildProcess(
            program: .path("/bin/sh"),
            arguments: [
                "-c", Self.recordingShell, record, command,
            ],
            workingDirectory: directory, output: .keep(lastBytes: shortCommandOutput),
            teardown: Teardown(timeout: limit),
            clock: clock)
    }

    /// The script of ``shortCommand(_:in:limit:clock:recordingPIDIn:)``; `$0` is the record's
    /// path and `$1` the command. Field 22 of `/proc/PID/stat` (the start time) is the 20th
    /// after the command name's closing parenthesis; a function's own arguments split it
    /// without touching `$1`.
    static let recordingShell = #"""
        { read -r s < /proc/$$/stat && s=${s##*) } && t() { echo "$$ ${20:--}"; } && t $s > "$0"; } 2>/dev/null \
          || { echo "$$ -" > "$0"; } 2>/dev/null
        exec /bin/sh -c "$1"
        """#
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
