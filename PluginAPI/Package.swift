// swift-tools-version: 6.2
import PackageDescription

// What a plugin links, as a package of its own: a plugin package depends on this directory by path
// (`.package(path: "…/jobrunner/PluginAPI")`) and resolves nothing else, none of the product's
// dependencies (Yams, ArgumentParser, …). jobrunner's own Package.swift uses it by path too, so
// the runner and its plugins are built from the same sources.
let package = Package(
    name: "PluginAPI",
    platforms: [.macOS(.v15)],
    products: [
        // A handler as a Swift type, exported in a line (`Plugin.export`).
        .library(name: "JobRunnerPluginAPI", targets: ["JobRunnerPluginAPI"]),
        // The ABI's C header, for plugins in C and for the host.
        .library(name: "CJobRunnerPlugin", targets: ["CJobRunnerPlugin"]),
        // The JSON of the ABI's documents; jobrunner uses it for its own too.
        .library(name: "JobRunnerJSON", targets: ["JobRunnerJSON"]),
    ],
    // None: a plugin resolves this package alone. `context.logger` (swift-log) is the package
    // PluginLogging/ beside it.
    dependencies: [],
    targets: [
        .target(name: "CJobRunnerPlugin"),
        // JSON read and written directly: the standard library and libc only.
        .target(name: "JobRunnerJSON"),
        .target(name: "JobRunnerPluginAPI", dependencies: ["CJobRunnerPlugin", "JobRunnerJSON"]),
    ]
)

// The same strict settings as jobrunner's own targets.
for target in package.targets where target.type != .system && target.type != .plugin {
    var settings = target.swiftSettings ?? []
    settings.append(.swiftLanguageMode(.v6))
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
