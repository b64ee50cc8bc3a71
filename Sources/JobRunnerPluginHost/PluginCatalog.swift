import Foundation
import JobRunnerCore
import JobRunnerPluginAPI

/// Finds plugin libraries from an ordered list of directories (SPEC 6), describes each once
/// and loads it into this process only when asked for and after a prober (when there is one)
/// has loaded it safely elsewhere.
public final class PluginCatalog: Sendable {
    /// The plugin ABI version this jobrunner speaks.
    public static let abiVersion = UInt32(JOBRUNNER_PLUGIN_ABI_VERSION)

    /// Where `lib<name>.so` is looked for, first match wins.
    public let searchPath: [String]
    /// Loads a library in a child process before this one ever does; nil: this process loads
    /// libraries directly (the child side, and tests of loading itself).
    private let prober: PluginProber?
    private let described = Locked<[String: Result<PluginDescription, PluginLoadError>]>([:])
    private let loaded = Locked<[String: Result<LoadedPlugin, PluginLoadError>]>([:])

    /// A catalog of the libraries in `searchPath`; with a `prober`, every library is loaded by
    /// the prober first and into this process only if it came through.
    public init(searchPath: [String], prober: PluginProber? = nil) {
        var seen = Set<String>()
        self.searchPath = searchPath.filter { seen.insert($0).inserted }
        self.prober = prober
    }

    /// The search path of SPEC 6: the job files' `plugins.paths`, `$JOBRUNNER_PLUGIN_PATH`,
    /// `plugins/` beside each job directory, the directory of the `jobrunner` executable.
    /// - Parameters:
    ///   - pluginPaths: `plugins.paths` of the job files, absolute.
    ///   - jobPaths: the files and directories given to the command.
    public static func standardSearchPath(
        pluginPaths: [String], jobPaths: [String],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        executable: String? = ExecutableLocation.path()
    ) -> [String] {
        var result = pluginPaths
        if let variable = environment["JOBRUNNER_PLUGIN_PATH"] {
            result += variable.split(separator: ":").map(String.init).filter { !$0.isEmpty }.map(absolute)
        }
        for path in jobPaths {
            let absolutePath = absolute(path)
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: absolutePath, isDirectory: &isDirectory)
            // A path that does not exist (yet) is a directory unless it names a YAML file.
            let names = exists ? isDirectory.boolValue : !(path.hasSuffix(".yaml") || path.hasSuffix(".yml"))
            let jobDirectory = names ? absolutePath : (absolutePath as NSString).deletingLastPathComponent
            result.append(
                ((jobDirectory as NSString).deletingLastPathComponent as NSString).appendingPathComponent(
                    "plugins"))
        }
        if let executable {
            let resolved = (executable as NSString).resolvingSymlinksInPath
            result.append((resolved as NSString).deletingLastPathComponent)
        }
        return result
    }

    private static func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return (full as NSString).standardizingPath
    }

    /// The path of `lib<name>.so`: the first in the search path.
    public func locate(_ name: String) -> Result<String, PluginLoadError> {
        let file = "lib\(name).so"
        guard
            let path = searchPath.lazy.map({ ($0 as NSString).appendingPathComponent(file) })
                .first(where: { FileManager.default.fileExists(atPath: $0) })
        else { return .failure(.notFound(plugin: name, searched: searchPath)) }
        return .success(path)
    }

    /// What plugin `name` says about itself, asked at the first call (of the prober, when there
    /// is one: the library is not loaded here); the same answer every later call.
    public func describe(_ name: String) -> Result<PluginDescription, PluginLoadError> {
        if prober == nil { return plugin(name).map(\.info) }
        if let known = described.withLock({ $0[name] }) { return known }
        // Probed without the lock, so that several libraries can be described at once; two
        // threads asking for one name at once may both probe it, and the first answer stays.
        let result = locate(name).flatMap { path in probe(name, path, checks: []).map(\.plugin) }
        return described.withLock { table in
            if let known = table[name] { return known }
            table[name] = result
            return result
        }
    }

    /// The plugin called `name`, loaded into this process at the first call (after the prober
    /// described it without a problem, when there is one); the same answer every later call.
    public func plugin(_ name: String) -> Result<LoadedPlugin, PluginLoadError> {
        loaded.withLock { table in
            if let known = table[name] { return known }
            let result: Result<LoadedPlugin, PluginLoadError>
            if prober != nil {
                result = describe(name).flatMap { Self.open(name: name, path: $0.path) }
            } else {
                result = locate(name).flatMap { Self.open(name: name, path: $0) }
            }
            table[name] = result
            return result
        }
    }

    /// Asks plugin `name` each of `checks` where a crash costs nothing: in a child process for
    /// a catalog with a prober, else here (the child side, and tests of loading itself). One
    /// answer per check: its verdict (nil: suitable), or why it could not be had.
    ///
    /// The checks go to one child together; when that child crashes or exits without an
    /// answer, they are asked again by halves, so the check at fault is the one blamed (a few
    /// more children per bad check). A check that hangs is not looked for that way, each half
    /// would cost the time limit again: every check of that child is blamed.
    func checkApart(_ name: String, _ checks: [PluginParameterCheck]) -> [Result<String?, PluginLoadError>] {
        guard !checks.isEmpty else { return [] }
        guard prober != nil else {
            switch plugin(name) {
            case .failure(let error): return checks.map { _ in .failure(error) }
            case .success(let plugin):
                return checks.map {
                    .success(plugin.check(handler: $0.handler, parameters: Array($0.parameters.utf8)))
                }
            }
        }
        let path: String
        switch describe(name) {
        case .failure(let error): return checks.map { _ in .failure(error) }
        case .success(let description): path = description.path
        }
        return checkInChildren(name, path, checks[...])
    }

    private func checkInChildren(
        _ name: String, _ path: String, _ checks: ArraySlice<PluginParameterCheck>
    ) -> [Result<String?, PluginLoadError>] {
        switch probe(name, path, checks: Array(checks)) {
        case .success(let answer): return answer.verdicts.map { .success($0) }
        case .failure(.checkCrashed(_, _, _, nil, _)) where checks.count > 1:
            let middle = checks.startIndex + checks.count / 2
            return checkInChildren(name, path, checks[..<middle])
                + checkInChildren(name, path, checks[middle...])
        case .failure(let error): return checks.map { _ in .failure(error) }
        }
    }

    private func probe(
        _ name: String, _ path: String, checks: [PluginParameterCheck]
    ) -> Result<PluginProbeAnswer, PluginLoadError> {
        guard let prober else {
            return .failure(.cannotDescribe(plugin: name, path: path, reason: "no prober"))
        }
        return prober(name, path, checks).flatMap { answer in
            Self.vet(answer.plugin, as: name).map { _ in answer }
        }
    }

    /// Every `lib*.so` in the search path that is a loadable plugin, or why it is not, for
    /// `jobrunner plugins`; the first of two libraries with one name wins, as for jobs.
    public func discover() -> [(
        name: String, path: String, result: Result<PluginDescription, PluginLoadError>
    )] {
        var names: [String] = []
        var seen = Set<String>()
        for directory in searchPath {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for entry in entries.sorted() where entry.hasPrefix("lib") && entry.hasSuffix(".so") {
                let name = String(entry.dropFirst(3).dropLast(3))
                if seen.insert(name).inserted { names.append(name) }
            }
        }
        // Described side by side: each is a child process that mostly waits.
        let all = names
        DispatchQueue.concurrentPerform(iterations: all.count) { index in _ = describe(all[index]) }
        return names.map { name in
            let result = describe(name)
            let path: String
            switch result {
            case .success(let plugin): path = plugin.path
            case .failure(let error): path = error.path
            }
            return (name, path, result)
        }
    }

    /// Loads the library at `path` into this process as plugin `name` and reads its descriptor.
    static func open(name: String, path: String) -> Result<LoadedPlugin, PluginLoadError> {
        // RTLD_LOCAL: two plugins' own symbols never mix. RTLD_NOW: a missing dependency is an
        // error here, at validation, not a crash in the middle of a run.
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown dlopen error"
            return .failure(.cannotOpen(plugin: name, path: path, reason: reason))
        }
        guard let symbol = dlsym(handle, JOBRUNNER_PLUGIN_SYMBOL) else {
            return .failure(.missingSymbol(plugin: name, path: path))
        }
        let entry = unsafeBitCast(symbol, to: jobrunner_plugin_entry.self)
        guard let descriptor = entry() else {
            return .failure(.abiMismatch(plugin: name, path: path, found: nil))
        }
        guard descriptor.pointee.abi_version == abiVersion else {
            return .failure(.abiMismatch(plugin: name, path: path, found: descriptor.pointee.abi_version))
        }
        return LoadedPlugin.read(plugin: name, path: path, descriptor: descriptor).flatMap { plugin in
            vet(plugin.info, as: name).map { _ in plugin }
        }
    }

    /// Whether `description` fits this jobrunner (its Swift) and the name it was looked up by.
    private static func vet(_ description: PluginDescription, as name: String) -> Result<
        Void, PluginLoadError
    > {
        if let version = description.swiftVersion, version != swiftCompilerVersion {
            return .failure(
                .swiftMismatch(
                    plugin: name, path: description.path, found: version, expected: swiftCompilerVersion))
        }
        guard description.name == name else {
            return .failure(.nameMismatch(plugin: name, path: description.path, found: description.name))
        }
        return .success(())
    }
}

extension PluginCatalog {
    /// The loaded plugin and handler name of a plugin job's attempt, or why there is none.
    func target(of request: AttemptRequest) -> Result<(plugin: LoadedPlugin, handler: String), TargetFailure>
    {
        target(of: request, plugin)
    }

    /// The described plugin and handler name of a plugin job's attempt that runs in a child
    /// process: the library is not loaded here. Or why there is none.
    func isolatedTarget(
        of request: AttemptRequest
    ) -> Result<(plugin: PluginDescription, handler: String), TargetFailure> {
        target(of: request, describe)
    }

    private func target<Plugin>(
        of request: AttemptRequest, _ find: (String) -> Result<Plugin, PluginLoadError>
    ) -> Result<(plugin: Plugin, handler: String), TargetFailure> {
        guard case .plugin(let name, let handler) = request.job.handler else {
            return .failure(TargetFailure(end: .cannotStart(.notForHandler("plugin"))))
        }
        switch find(name) {
        case .success(let found): return .success((found, handler))
        case .failure(let error):
            return .failure(TargetFailure(end: .cannotStart(.plugin(error.description))))
        }
    }
}

/// Why an attempt ended before its plugin's handler could be called.
struct TargetFailure: Error {
    var end: AttemptEnd
}
