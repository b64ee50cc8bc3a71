import Foundation
import JobRunnerCore
import JobRunnerPluginAPI
import Synchronization

/// Finds and loads plugin libraries, each once, from an ordered list of directories (SPEC 6).
public final class PluginCatalog: Sendable {
    /// The plugin ABI version this jobrunner speaks.
    public static let abiVersion = UInt32(JOBRUNNER_PLUGIN_ABI_VERSION)

    /// Where `lib<name>.so` is looked for, first match wins.
    public let searchPath: [String]
    private let loaded = Mutex<[String: Result<LoadedPlugin, PluginLoadError>]>([:])

    public init(searchPath: [String]) {
        var seen = Set<String>()
        self.searchPath = searchPath.filter { seen.insert($0).inserted }
    }

    /// The search path of SPEC 6: the job files' `plugins.paths`, `$JOBRUNNER_PLUGIN_PATH`,
    /// `plugins/` beside each job directory, the directory of the `jobrunner` executable.
    /// - Parameters:
    ///   - pluginPaths: `plugins.paths` of the job files, absolute.
    ///   - jobPaths: the files and directories given to the command.
    public static func standardSearchPath(
        pluginPaths: [String], jobPaths: [String],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        executable: String? = Bundle.main.executablePath
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

    /// The plugin called `name`, loaded at the first call; the same answer every later call.
    public func plugin(_ name: String) -> Result<LoadedPlugin, PluginLoadError> {
        loaded.withLock { table in
            if let known = table[name] { return known }
            let result = load(name)
            table[name] = result
            return result
        }
    }

    /// Every `lib*.so` in the search path that is a loadable plugin, or why it is not, for
    /// `jobrunner plugins`; the first of two libraries with one name wins, as for jobs.
    public func discover() -> [(name: String, path: String, result: Result<LoadedPlugin, PluginLoadError>)] {
        var names: [String] = []
        var seen = Set<String>()
        for directory in searchPath {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for entry in entries.sorted() where entry.hasPrefix("lib") && entry.hasSuffix(".so") {
                let name = String(entry.dropFirst(3).dropLast(3))
                if seen.insert(name).inserted { names.append(name) }
            }
        }
        return names.map { name in
            let result = plugin(name)
            let path: String
            switch result {
            case .success(let plugin): path = plugin.path
            case .failure(.cannotOpen(_, let at, _)), .failure(.missingSymbol(_, let at)),
                .failure(.abiMismatch(_, let at, _)), .failure(.swiftMismatch(_, let at, _, _)),
                .failure(.nameMismatch(_, let at, _)):
                path = at
            case .failure(.notFound): path = ""
            }
            return (name, path, result)
        }
    }

    private func load(_ name: String) -> Result<LoadedPlugin, PluginLoadError> {
        let file = "lib\(name).so"
        guard
            let path = searchPath.lazy.map({ ($0 as NSString).appendingPathComponent(file) })
                .first(where: { FileManager.default.fileExists(atPath: $0) })
        else { return .failure(.notFound(plugin: name, searched: searchPath)) }
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
        guard descriptor.pointee.abi_version == Self.abiVersion else {
            return .failure(.abiMismatch(plugin: name, path: path, found: descriptor.pointee.abi_version))
        }
        let plugin = LoadedPlugin(path: path, descriptor: descriptor)
        if let version = plugin.swiftVersion, version != swiftCompilerVersion {
            return .failure(
                .swiftMismatch(plugin: name, path: path, found: version, expected: swiftCompilerVersion))
        }
        guard plugin.name == name else {
            return .failure(.nameMismatch(plugin: name, path: path, found: plugin.name))
        }
        return .success(plugin)
    }
}

extension PluginCatalog {
    /// The loaded plugin and handler name of a plugin job's attempt, or the failed result to
    /// record when there is none.
    func target(of request: AttemptRequest) -> Result<(plugin: LoadedPlugin, handler: String), AttemptFailure>
    {
        guard case .plugin(let name, let handler) = request.job.handler else {
            return .failure(
                AttemptFailure(result: AttemptResult(outcome: .failed, reason: "not a plugin job")))
        }
        switch plugin(name) {
        case .success(let loaded): return .success((loaded, handler))
        case .failure(let error):
            return .failure(
                AttemptFailure(result: AttemptResult(outcome: .failed, reason: error.description)))
        }
    }
}

/// An attempt that ended before its handler could be called.
struct AttemptFailure: Error {
    var result: AttemptResult
}
