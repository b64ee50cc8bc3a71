// `stat` and `timespec`: with SwiftNIO in the build (the dashboard), their definitions may be
// found in CDispatch's module, which MemberImportVisibility then asks to be imported.
import CDispatch
import Foundation
import Glibc
import JobRunnerCore
import JobRunnerPluginHost

/// How this jobrunner vets a plugin library before loading it into itself: `jobrunner
/// plugin-describe` loads it in a child process first, once per version of the library file.
enum PluginVetting {
    /// This jobrunner's executable, which the children run.
    static let executable = ExecutableLocation.runnablePath()

    /// How long a child may take to load and describe a library:
    /// `$JOBRUNNER_PLUGIN_LOAD_TIMEOUT` seconds, else 30.
    static func timeout(environment: [String: String] = ProcessInfo.processInfo.environment) -> Duration {
        guard let text = environment["JOBRUNNER_PLUGIN_LOAD_TIMEOUT"], let seconds = Double(text),
            seconds > 0,
            seconds < 86_400
        else { return .seconds(30) }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// Descriptions already asked, by library version: a library that did not change is not
    /// loaded again, by any catalog of this process (`serve` makes one per reload).
    private static let described = Locked<[LibraryVersion: Result<PluginProbeAnswer, PluginLoadError>]>([:])

    /// The prober of catalogs that run jobs: children of the `executable` (this jobrunner),
    /// each given `timeout`.
    static func prober(executable: String, timeout: Duration) -> PluginProber {
        { name, path, checks in
            let version = LibraryVersion(name: name, path: path)
            if checks.isEmpty, let version, let known = described.withLock({ $0[version] }) { return known }
            let result = probe(
                name: name, path: path, checks: checks, executable: executable, timeout: timeout)
            if checks.isEmpty, let version { described.withLock { $0[version] = result } }
            return result
        }
    }

    private static func probe(
        name: String, path: String, checks: [PluginParameterCheck], executable: String, timeout: Duration
    ) -> Result<PluginProbeAnswer, PluginLoadError> {
        let input: [UInt8]
        do {
            input = Array(try JSONEncoder().encode(checks))
        } catch {
            return .failure(
                .cannotDescribe(plugin: name, path: path, reason: "cannot encode its checks: \(error)"))
        }
        let child = BlockingChild(
            executable: executable, arguments: ["plugin-describe", "--library", path, "--plugin", name],
            input: input, timeout: timeout, outputLimit: PluginLimits.responseBytes,
            // The signal is all that is reported of a crash: the Swift runtime's symbolicated
            // backtrace would take seconds per crashing library and be thrown away.
            environment: ["SWIFT_BACKTRACE": "enable=no"])
        let outcome = child.run()
        // The library was described without a problem before any check is asked: a child that
        // fails while answering checks failed in a check.
        let checking = !checks.isEmpty
        switch outcome.ending {
        case .signalled(let signal) where checking:
            return .failure(
                .checkCrashed(plugin: name, path: path, signal: signal, seconds: nil, reason: nil))
        case .timedOut where checking:
            return .failure(
                .checkCrashed(plugin: name, path: path, signal: nil, seconds: seconds(timeout), reason: nil))
        case .exited(let status) where checking && (status != 0 || outcome.output.isEmpty):
            return .failure(
                .checkCrashed(
                    plugin: name, path: path, signal: nil, seconds: nil,
                    reason: "exit status \(status)" + lastLine(of: outcome.errors).map { ": \($0)" }.orEmpty))
        case .signalled(let signal):
            return .failure(.crashedWhileLoading(plugin: name, path: path, signal: signal))
        case .timedOut:
            return .failure(.loadTimedOut(plugin: name, path: path, seconds: seconds(timeout)))
        case .failedToStart(let why):
            return .failure(
                .cannotDescribe(plugin: name, path: path, reason: "cannot start a process to load it: \(why)")
            )
        case .exited(let status) where status != 0:
            return .failure(
                .cannotDescribe(
                    plugin: name, path: path,
                    reason: "the process that loaded it to describe it exited \(status)"
                        + lastLine(of: outcome.errors).map { ": \($0)" }.orEmpty))
        case .exited:
            guard outcome.output.count <= PluginLimits.responseBytes,
                let reply = try? JSONDecoder().decode(PluginProbeReply.self, from: Data(outcome.output))
            else {
                return .failure(
                    .cannotDescribe(
                        plugin: name, path: path,
                        reason:
                            "the process that loaded it to describe it wrote no description jobrunner can read"
                    ))
            }
            if let refusal = reply.refusal { return .failure(refusal) }
            guard let answer = reply.answer, answer.verdicts.count == checks.count else {
                return .failure(
                    .cannotDescribe(
                        plugin: name, path: path,
                        reason: "the process that loaded it to describe it answered something else than asked"
                    ))
            }
            return .success(answer)
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The last non-empty line of `errors`, at most 300 characters: what a child most likely
    /// said about why it failed.
    private static func lastLine(of errors: [UInt8]) -> String? {
        let text = String(decoding: errors, as: UTF8.self)
        guard
            let line = text.split(whereSeparator: \.isNewline).last(where: { !$0.allSatisfy(\.isWhitespace) })
        else { return nil }
        return String(line.trimmingCharacters(in: .whitespaces).prefix(300))
    }
}

extension String? {
    fileprivate var orEmpty: String { self ?? "" }
}

/// One version of a library file: a library replaced or rewritten (another inode, size or
/// modification time) is described again.
struct LibraryVersion: Hashable {
    var name: String
    var path: String
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modifiedSeconds: Int
    var modifiedNanoseconds: Int

    /// The version of the file at `path` now; nil when it cannot be read.
    init?(name: String, path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.name = name
        self.path = path
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modifiedSeconds = info.st_mtim.tv_sec
        modifiedNanoseconds = info.st_mtim.tv_nsec
    }
}
