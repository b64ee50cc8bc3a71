// swift-tools-version: 6.2
import PackageDescription

// `context.logger` for plugins: the attempt's log through swift-log. A package apart from
// PluginAPI/, so that only a plugin that wants swift-log resolves it; one that needs just the API
// depends on PluginAPI/ alone.
let package = Package(
    name: "PluginLogging",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "JobRunnerPluginLogging", targets: ["JobRunnerPluginLogging"])
    ],
    dependencies: [
        .package(path: "../PluginAPI"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "JobRunnerPluginLogging",
            dependencies: [
                .product(name: "JobRunnerPluginAPI", package: "PluginAPI"),
                .product(name: "Logging", package: "swift-log"),
            ]
        )
    ]
)

// The same strict settings as jobrunner's own targets.
for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(.swiftLanguageMode(.v6))
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
