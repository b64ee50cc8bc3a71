import Foundation
import JobRunnerCore
import Subprocess

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// `connectivity.probe`: a shell command whose exit 0 means online. A probe that runs longer
/// than its time limit means offline.
public struct CommandProbe: ConnectivityProbe {
    public var command: String
    public var workingDirectory: String?
    public var timeLimit: Duration

    public init(command: String, workingDirectory: String?, timeLimit: Duration) {
        self.command = command
        self.workingDirectory = workingDirectory
        self.timeLimit = timeLimit
    }

    public func isOnline() async -> Bool {
        var options = PlatformOptions()
        options.processGroupID = 0
        options.teardownSequence = [
            .gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: .seconds(1))
        ]
        let limit = timeLimit
        let result = try? await Subprocess.run(
            .path("/bin/sh"), arguments: ["-c", command],
            workingDirectory: workingDirectory.map { FilePath($0) },
            platformOptions: options, input: .none, output: .sequence, error: .combinedWithOutput
        ) { execution in
            // The output ends when the probe exits; whichever comes first, that or the limit.
            let finished = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    do {
                        for try await _ in execution.standardOutput {}
                    } catch {}
                    return true
                }
                group.addTask {
                    do {
                        try await Task.sleep(for: limit)
                        return false
                    } catch {
                        return true
                    }
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            if !finished {
                await execution.teardown(using: [
                    .gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: .seconds(1))
                ])
            }
            return finished
        }
        guard let result, case .exited(0) = result.terminationStatus else { return false }
        return result.closureResult
    }
}

/// The built-in check, which sends no traffic: online when a non-loopback interface is up and
/// a default route exists through one.
public struct SystemProbe: ConnectivityProbe {
    public init() {}

    public func isOnline() async -> Bool {
        guard let routes = try? String(contentsOfFile: "/proc/net/route", encoding: .utf8) else {
            return false
        }
        return Self.defaultRouteInterfaces(routes).contains { interface in
            let state =
                (try? String(contentsOfFile: "/sys/class/net/\(interface)/operstate", encoding: .utf8)) ?? ""
            // Some virtual interfaces report "unknown" while they carry traffic.
            return ["up", "unknown"].contains(state.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// The non-loopback interfaces that carry a default route, from /proc/net/route's text.
    static func defaultRouteInterfaces(_ routes: String) -> [String] {
        routes.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count > 3, fields[1] == "00000000", fields[0] != "lo",
                let flags = Int(fields[3], radix: 16), flags & 0x1 != 0
            else { return nil }
            return String(fields[0])
        }
    }
}

/// `JOBRUNNER_ONLINE=0|1`: the answer, forced.
public struct FixedProbe: ConnectivityProbe {
    public var online: Bool
    public init(online: Bool) { self.online = online }
    public func isOnline() async -> Bool { online }
}
