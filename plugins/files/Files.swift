import Foundation
import JobRunnerPluginAPI

/// `files.refresh`: keeps a cached copy of a source file fresh.
///
/// ```yaml
/// refresh-users:
///   plugin: files.refresh
///   with:
///     source: data/users.csv      # relative to the job's workdir
///     cache: cache/users.csv
///     maxAge: 600                 # seconds: a younger cache is kept as it is
///     rateLimited: 1              # simulate a source that rate-limits the first attempt
///     retryAfter: 2               # ...and asks to come back after 2 s
/// ```
///
/// Outputs: `path` (the cache's absolute path), `bytes`, `refreshed` (`true` or `false`).
struct Refresh: PluginHandler {
    struct Parameters: Decodable, Sendable {
        var source: String
        var cache: String
        var maxAge: Double?
        var rateLimited: Int?
        var retryAfter: Double?
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let name = "refresh"

    func run(_ context: HandlerContext<Parameters>) async throws -> HandlerResult {
        let parameters = context.parameters
        if context.attempt <= parameters.rateLimited ?? 0 {
            let after = parameters.retryAfter ?? 1
            context.log("source answered 429 Too Many Requests (simulated); retry after \(after)s")
            return .retry(after: .milliseconds(Int64(after * 1000)), "rate limited by the source")
        }
        let base = URL(fileURLWithPath: context.workingDirectory + "/")
        let source = URL(fileURLWithPath: parameters.source, relativeTo: base).standardizedFileURL
        let cache = URL(fileURLWithPath: parameters.cache, relativeTo: base).standardizedFileURL
        let manager = FileManager.default

        if let maxAge = parameters.maxAge,
            let attributes = try? manager.attributesOfItem(atPath: cache.path),
            let modified = attributes[.modificationDate] as? Date,
            Date().timeIntervalSince(modified) < maxAge
        {
            let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
            context.log("cache \(cache.path) is younger than \(maxAge)s; kept")
            return .succeeded(outputs: ["path": cache.path, "bytes": String(size), "refreshed": "false"])
        }
        guard let data = manager.contents(atPath: source.path) else {
            throw Failure(description: "cannot read source \(source.path)")
        }
        try manager.createDirectory(at: cache.deletingLastPathComponent(), withIntermediateDirectories: true)
        // Written beside the cache, then renamed: a reader never sees half a file.
        try data.write(to: cache, options: .atomic)
        context.log("refreshed \(cache.path) from \(source.path) (\(data.count) bytes)")
        return .succeeded(outputs: ["path": cache.path, "bytes": String(data.count), "refreshed": "true"])
    }
}

@_cdecl("jobrunner_plugin_v1")
public func jobrunnerPlugin() -> UnsafeRawPointer {
    Plugin.export(name: "files", version: "1.0.0", handlers: [Refresh.self])
}
