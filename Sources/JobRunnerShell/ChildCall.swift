import Foundation
import JobRunnerCore
import Subprocess
import Synchronization

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// Runs a helper program for one call: bytes in on standard input, bytes out on standard
/// output, standard error appended to a log file. Used to run a plugin handler in a child
/// `jobrunner` process (`isolation: process`).
///
/// The child gets a process group of its own; a timeout (on the injected clock) or a stop of the
/// runner ends the group with SIGTERM, then SIGKILL after the grace period.
public struct ChildCall: Sendable {
    /// How the child ended.
    public enum Outcome: Sendable, Equatable {
        case exited(Int32, output: [UInt8])
        case signalled(Int32)
        case timedOut
        case failedToStart(String)
        case interrupted
    }

    let clock: any RunnerClock
    let gracePeriod: Duration

    public init(clock: any RunnerClock = SystemClock(), gracePeriod: Duration = .seconds(5)) {
        self.clock = clock
        self.gracePeriod = gracePeriod
    }

    public func run(
        executable: String, arguments: [String], input: [UInt8], errorLog: String, timeout: Duration?,
        onSpawn: @escaping @Sendable (Int32) -> Void
    ) async -> Outcome {
        await ChildSlots.shared.withSlot {
            if Task.isCancelled { return .interrupted }
            return await runChild(
                executable: executable, arguments: arguments, input: input, errorLog: errorLog,
                timeout: timeout,
                onSpawn: onSpawn)
        }
    }

    private func runChild(
        executable: String, arguments: [String], input: [UInt8], errorLog: String, timeout: Duration?,
        onSpawn: @escaping @Sendable (Int32) -> Void
    ) async -> Outcome {
        var options = PlatformOptions()
        options.processGroupID = 0
        options.teardownSequence = [
            .gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: gracePeriod)
        ]
        try? FileManager.default.createDirectory(
            atPath: (errorLog as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let errorOutput: FileDescriptor
        do {
            errorOutput = try FileDescriptor.open(
                FilePath(errorLog), .writeOnly, options: [.create, .append, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch {
            return .failedToStart("cannot open the attempt's log \(errorLog): \(error)")
        }
        let timedOut = Flag()
        let clock = self.clock
        let gracePeriod = self.gracePeriod
        let deadline = timeout.map { clock.now().addingTimeInterval($0.seconds) }
        do {
            let result = try await Subprocess.run(
                .path(FilePath(executable)), arguments: Arguments(arguments), platformOptions: options,
                input: .array(input), output: .sequence,
                error: .fileDescriptor(errorOutput, closeAfterSpawningProcess: true)
            ) { execution in
                onSpawn(execution.processIdentifier.value)
                return await withTaskGroup(of: Void.self) { group in
                    if let deadline {
                        group.addTask {
                            guard (try? await clock.sleep(until: deadline)) != nil else { return }
                            timedOut.value.store(true, ordering: .relaxed)
                            await execution.teardown(using: [
                                .gracefulShutDown(
                                    toProcessGroup: true, allowedDurationToNextStep: gracePeriod)
                            ])
                        }
                    }
                    var output: [UInt8] = []
                    do {
                        for try await buffer in execution.standardOutput {
                            buffer.withUnsafeBytes { output.append(contentsOf: $0) }
                        }
                    } catch {
                        // Cancelled, or the pipe broke: what was read is kept.
                    }
                    group.cancelAll()
                    return output
                }
            }
            if Task.isCancelled { return .interrupted }
            if timedOut.value.load(ordering: .relaxed) { return .timedOut }
            switch result.terminationStatus {
            case .exited(let code): return .exited(code, output: result.closureResult)
            case .signaled(let signal): return .signalled(signal)
            }
        } catch {
            return .failedToStart("\(error)")
        }
    }
}

/// A flag the timeout task sets and the caller reads.
private final class Flag: Sendable {
    let value = Atomic<Bool>(false)
}
