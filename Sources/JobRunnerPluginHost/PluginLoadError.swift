import JobRunnerCore

/// Why a plugin could not be used; each becomes a validation error at the job's `plugin:` line.
public enum PluginLoadError: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    /// No `lib<name>.so` in any search directory.
    case notFound(plugin: String, searched: [String])
    /// `dlopen` failed (not a library, a missing dependency, wrong architecture).
    case cannotOpen(plugin: String, path: String, reason: String)
    /// The library does not export `jobrunner_plugin_v1`.
    case missingSymbol(plugin: String, path: String)
    /// The descriptor is NULL or carries another ABI version.
    case abiMismatch(plugin: String, path: String, found: UInt32?)
    /// A Swift plugin built by another compiler version than jobrunner.
    case swiftMismatch(plugin: String, path: String, found: String, expected: String)
    /// The library's descriptor names another plugin.
    case nameMismatch(plugin: String, path: String, found: String)
    /// The descriptor claims what cannot be (2^40 handlers, a name with no end, no `invoke`).
    case badDescriptor(plugin: String, path: String, reason: String)
    /// The child process that loaded the library to describe it was killed by `signal`: loading
    /// the library, or calling `jobrunner_plugin_v1` and reading what it returned, crashes.
    case crashedWhileLoading(plugin: String, path: String, signal: Int32)
    /// The child process that loaded the library to describe it did not finish in `seconds`.
    case loadTimedOut(plugin: String, path: String, seconds: Double)
    /// The child process that loaded the library to describe it gave no description.
    case cannotDescribe(plugin: String, path: String, reason: String)
    /// The plugin's parameter check (`check_parameters`), asked in a child process, crashed it
    /// (`signal`), kept it past `seconds` (`signal` nil), or ended it without an answer
    /// (`reason`, e.g. a call of `exit`).
    case checkCrashed(plugin: String, path: String, signal: Int32?, seconds: Double?, reason: String?)

    /// The library's path; empty when none was found.
    public var path: String {
        switch self {
        case .notFound: return ""
        case .cannotOpen(_, let path, _), .missingSymbol(_, let path), .abiMismatch(_, let path, _),
            .swiftMismatch(_, let path, _, _), .nameMismatch(_, let path, _), .badDescriptor(_, let path, _),
            .crashedWhileLoading(_, let path, _), .loadTimedOut(_, let path, _),
            .cannotDescribe(_, let path, _), .checkCrashed(_, let path, _, _, _):
            return path
        }
    }

    public var description: String {
        switch self {
        case .notFound(let plugin, let searched):
            let list = searched.isEmpty ? "nowhere (no search directories)" : searched.joined(separator: ", ")
            return "plugin \(VisibleText.quoted(plugin)) not found: no lib\(plugin).so in \(list); "
                + "set plugins.paths in a job file or JOBRUNNER_PLUGIN_PATH"
        case .cannotOpen(let plugin, let path, let reason):
            return "cannot load plugin \(VisibleText.quoted(plugin)) from \(path): \(reason)"
        case .missingSymbol(let plugin, let path):
            return "plugin \(VisibleText.quoted(plugin)) (\(path)) does not export jobrunner_plugin_v1; "
                + "is it a jobrunner plugin? (see docs/writing-a-plugin.md)"
        case .abiMismatch(let plugin, let path, let found):
            let what =
                found.map { "ABI version \($0)" } ?? "no descriptor (jobrunner_plugin_v1 returned NULL)"
            return
                "plugin \(VisibleText.quoted(plugin)) (\(path)) has \(what); this jobrunner loads ABI version "
                + "\(PluginCatalog.abiVersion); rebuild the plugin against this jobrunner"
        case .swiftMismatch(let plugin, let path, let found, let expected):
            return
                "plugin \(VisibleText.quoted(plugin)) (\(path)) was built with Swift \(found), this jobrunner with Swift "
                + "\(expected); Swift has no stable ABI on Linux, rebuild the plugin with Swift \(expected)"
        case .nameMismatch(let plugin, let path, let found):
            return
                "\(path) calls itself plugin \(VisibleText.quoted(found)), not \(VisibleText.quoted(plugin)); rename the library lib\(found).so "
                + "or the job's plugin"
        case .badDescriptor(let plugin, let path, let reason):
            return "plugin \(VisibleText.quoted(plugin)) (\(path)) has a malformed descriptor: \(reason); "
                + "fix the plugin (see docs/writing-a-plugin.md)"
        case .crashedWhileLoading(let plugin, let path, let signal):
            return
                "plugin \(VisibleText.quoted(plugin)) (\(path)) crashed while being loaded in a separate process "
                + "(\(AttemptEnd.describe(signal: signal))); jobrunner did not load it; the file may be "
                + "damaged or incomplete, or its constructors or jobrunner_plugin_v1 crash: rebuild or fix it"
        case .loadTimedOut(let plugin, let path, let seconds):
            return
                "plugin \(VisibleText.quoted(plugin)) (\(path)) was still loading after \(Self.format(seconds)) "
                + "in a separate process and was stopped; jobrunner did not load it; "
                + "check the library's constructors for one that never returns"
        case .cannotDescribe(let plugin, let path, let reason):
            return "plugin \(VisibleText.quoted(plugin)) (\(path)) could not be described: \(reason)"
        case .checkCrashed(let plugin, let path, let signal, let seconds, let reason):
            let how: String
            if let signal {
                how = "crashed (\(AttemptEnd.describe(signal: signal)))"
            } else if let seconds {
                how = "was still running after \(Self.format(seconds)) and was stopped"
            } else {
                how = "ended its process without an answer" + (reason.map { " (\($0))" } ?? "")
            }
            return
                "plugin \(VisibleText.quoted(plugin)) (\(path)): its check of the job's with: parameters "
                + "(check_parameters) \(how) in a separate process; jobrunner did not run it in this "
                + "process; fix the plugin's check, which must return a verdict, never crash, loop or exit"
        }
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(seconds)s"
    }
}
