// swift-tools-version: 6.2
import PackageDescription

// A plugin package, as docs/writing-a-plugin.md builds it: it depends on jobrunner's PluginAPI
// package alone (by path here; `../jobrunner/PluginAPI` beside a checkout), so it resolves
// nothing else. Its product's name is the plugin's name: `swift build -c release` makes
// .build/release/libgreet.so.
let package = Package(
    name: "greet",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "greet", type: .dynamic, targets: ["Greet"])
    ],
    dependencies: [.package(path: "../../PluginAPI")],
    targets: [
        .target(name: "Greet", dependencies: [.product(name: "JobRunnerPluginAPI", package: "PluginAPI")])
    ]
)
