import Foundation
import JobRunnerCore

/// `connectivity.probe`: a shell command whose exit 0 means online. A probe that runs longer
/// than its time limit means offline.
public struct CommandProbe: ConnectivityProbe {
    /// The command, for `/bin/sh -c`.
    public var command: String
    /// Where it runs: the directory of the file that declares it.
    public var workingDirectory: String?
    /// How long one probe may take before it counts as offline.
    public var timeLimit: Duration
    /// Measures the time limit and the grace period after it.
    public var clock: any RunnerClock

    /// A probe whose time is measured on `clock`.
    public init(
        command: String, workingDirectory: String?, timeLimit: Duration,
        clock: any RunnerClock = SystemClock()
    ) {
        self.command = command
        self.workingDirectory = workingDirectory
        self.timeLimit = timeLimit
        self.clock = clock
    }

    /// Runs the command once: online when it exits 0 within the time limit.
    public func isOnline() async -> Bool {
        await ChildProcess.shortCommand(command, in: workingDirectory, limit: timeLimit, clock: clock).run()
            .succeeded
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
