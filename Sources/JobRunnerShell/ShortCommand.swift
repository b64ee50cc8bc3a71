import Foundation
import JobRunnerCore
import Subprocess

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// A short helper command (connectivity probe, constraint check or satisfy): `/bin/sh -c` in
/// its own process group, output kept (the last 64 KiB), ended when it outlives its time limit.
struct ShortCommand {
    struct Outcome {
        /// nil when it could not start or ran past its limit.
        var exitCode: Int32?
        var timedOut: Bool
        var output: [UInt8]

        var succeeded: Bool { exitCode == 0 && !timedOut }

        /// The last non-empty line of output, trimmed to 200 characters.
        var lastLine: String {
            let text = String(decoding: output, as: UTF8.self)
            let line = text.split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
            return String(line.trimmingCharacters(in: .whitespaces).prefix(200))
        }
    }

    static let keptOutput = 64 << 10

    static func run(_ command: String, in directory: String?, limit: Duration) async -> Outcome {
        var options = PlatformOptions()
        options.processGroupID = 0
        options.teardownSequence = [
            .gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: .seconds(1))
        ]
        do {
            let result = try await Subprocess.run(
                .path("/bin/sh"), arguments: ["-c", command],
                workingDirectory: directory.map { FilePath($0) },
                platformOptions: options, input: .none, output: .sequence, error: .combinedWithOutput
            ) { execution in
                // The output ends when the command exits; whichever comes first, that or the limit.
                let output = await withTaskGroup(of: [UInt8]?.self) { group in
                    group.addTask {
                        var kept: [UInt8] = []
                        do {
                            for try await buffer in execution.standardOutput {
                                buffer.withUnsafeBytes { kept.append(contentsOf: $0) }
                                if kept.count > keptOutput { kept.removeFirst(kept.count - keptOutput) }
                            }
                        } catch {}
                        return kept
                    }
                    group.addTask {
                        try? await Task.sleep(for: limit)
                        return nil
                    }
                    let first = await group.next() ?? nil
                    group.cancelAll()
                    return first
                }
                if output == nil {
                    await execution.teardown(using: [
                        .gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: .seconds(1))
                    ])
                }
                return output
            }
            guard let output = result.closureResult else {
                return Outcome(
                    exitCode: nil, timedOut: true,
                    output: Array("timed out after \(JobDuration.format(limit))".utf8))
            }
            if case .exited(let code) = result.terminationStatus {
                return Outcome(exitCode: code, timedOut: false, output: output)
            }
            return Outcome(
                exitCode: nil, timedOut: false, output: output + Array("\nkilled by a signal".utf8))
        } catch {
            return Outcome(exitCode: nil, timedOut: false, output: Array("cannot start: \(error)".utf8))
        }
    }
}

/// Runs constraints' `check` and `satisfy` commands (SPEC 5.6).
public struct ShellConstraints: ConstraintRunner {
    public init() {}

    public func check(_ constraint: ConstraintDefinition) async -> Bool {
        await ShortCommand.run(constraint.check, in: constraint.workingDirectory, limit: constraint.timeout)
            .succeeded
    }

    public func satisfy(_ constraint: ConstraintDefinition) async -> SatisfyOutcome {
        let outcome = await ShortCommand.run(
            constraint.satisfy, in: constraint.workingDirectory, limit: constraint.timeout)
        if outcome.succeeded { return .satisfied }
        let line = outcome.lastLine
        if outcome.timedOut {
            return .failed(lastLine: "timed out after \(JobDuration.format(constraint.timeout))")
        }
        return .failed(lastLine: line.isEmpty ? "exit \(outcome.exitCode.map(String.init) ?? "?")" : line)
    }
}
