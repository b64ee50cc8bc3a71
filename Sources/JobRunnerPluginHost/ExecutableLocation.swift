import Foundation
import Glibc

/// Where the running executable is, found without `Bundle.main`: Foundation's main bundle
/// looks at the executable's directory and traps when the user cannot search it (a binary
/// under a root-owned 0700 directory run as another user through `setpriv`), which crashed
/// every command before it did anything.
public enum ExecutableLocation {
    /// The executable's path as the kernel knows it (`/proc/self/exe`), else `argv[0]` (as
    /// given when it holds a `/`, else found in `PATH`); nil when neither tells. This user may
    /// not be able to reach it: see ``runnablePath()``.
    public static func path() -> String? {
        if let linked = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"),
            linked.hasPrefix("/")
        {
            // The kernel appends " (deleted)" to the path of an executable replaced since.
            let deleted = " (deleted)"
            return linked.hasSuffix(deleted) ? String(linked.dropLast(deleted.count)) : linked
        }
        guard let first = CommandLine.arguments.first, !first.isEmpty else { return nil }
        if first.contains("/") { return first }
        let searched = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        return searched.lazy.map { ($0 as NSString).appendingPathComponent(first) }
            .first { access($0, X_OK) == 0 }
    }

    /// A path that runs this executable again, for the children it starts (plugin probes and
    /// workers): ``path()``, its symbolic links resolved, when this user can run it from there;
    /// else `/proc/self/exe`, which a child spawned from here opens as the same file whatever
    /// the directories on the way allow.
    public static func runnablePath() -> String {
        guard let path = path(), access(path, X_OK) == 0 else { return "/proc/self/exe" }
        return (path as NSString).resolvingSymlinksInPath
    }
}
