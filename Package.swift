// swift-tools-version: 6.2
import PackageDescription

/// The products of the package PluginAPI/ that jobrunner's targets use.
enum API {
    /// JSON read and written directly (the standard library and libc only): the store's rows, the
    /// plugin ABI's documents, the CLI's output.
    static let json = Target.Dependency.product(name: "JobRunnerJSON", package: "PluginAPI")
    static let plugin = Target.Dependency.product(name: "JobRunnerPluginAPI", package: "PluginAPI")
    /// From the package PluginLogging/: the tests' testkit plugin logs through it.
    static let logging = Target.Dependency.product(name: "JobRunnerPluginLogging", package: "PluginLogging")
    static let cHeader = Target.Dependency.product(name: "CJobRunnerPlugin", package: "PluginAPI")
}

let package = Package(
    name: "jobrunner",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "jobrunner", targets: ["jobrunner"]),
        // What plugin authors link is the package PluginAPI/ (products JobRunnerPluginAPI,
        // JobRunnerPluginLogging, CJobRunnerPlugin): a plugin depends on it alone.
        // Example plugins: lib<name>.so next to the jobrunner binary, found without configuration.
        .library(name: "noop", type: .dynamic, targets: ["NoopPlugin"]),
        .library(name: "files", type: .dynamic, targets: ["FilesPlugin"]),
        .library(name: "hello", type: .dynamic, targets: ["HelloCPlugin"]),
        // The tests' own plugins (Tests/Plugins) are no products: TestPluginLibraries builds them
        // for the test target alone, so that no build puts them beside the binary.
    ],
    dependencies: [
        // The plugin API, a package of its own in this repository, so that a plugin resolves it alone.
        .package(path: "PluginAPI"),
        // `context.logger` for plugins (swift-log), apart so that a plugin without it resolves nothing.
        .package(path: "PluginLogging"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // `serve` as a service: graceful shutdown on SIGTERM and SIGINT.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The PostgreSQL store (SPEC 8): the client, its connection pool and LISTEN/NOTIFY.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // Its TLS settings, for a store reached over TCP with sslmode=prefer or require.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The dashboard, JSON API, SSE and /metrics (SPEC 7).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        // zlib, for its crc32: the checksum the LMDB store writes with every record.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(
            name: "JobRunnerCore",
            dependencies: [
                API.json,
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .target(
            name: "JobRunnerYAML",
            dependencies: ["JobRunnerCore", .product(name: "Yams", package: "Yams")]
        ),
        .target(
            name: "JobRunnerLMDB",
            dependencies: ["JobRunnerCore", API.json, "CLMDB", "CZlib"]
        ),
        // The PostgreSQL store (SPEC 8): the only module that speaks SQL.
        .target(
            name: "JobRunnerPostgres",
            dependencies: [
                "JobRunnerCore", API.json,
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // prctl, which Swift cannot call (it is variadic): the runner as a child subreaper.
        .target(name: "CJobRunnerSystem"),
        .target(
            name: "JobRunnerShell",
            dependencies: [
                "JobRunnerCore", "CJobRunnerSystem",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Subprocess", package: "swift-subprocess"),
            ]
        ),
        .target(
            name: "JobRunnerPluginHost",
            dependencies: [
                "JobRunnerCore", API.json, API.plugin,
                // The calls waiting for a plugin worker (`isolation: process`) or for one of the
                // in-process call threads.
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .target(name: "NoopPlugin", dependencies: [API.plugin], path: "plugins/noop"),
        .target(name: "FilesPlugin", dependencies: [API.plugin], path: "plugins/files"),
        .target(name: "HelloCPlugin", dependencies: [API.cHeader], path: "plugins/hello-c"),
        // Builds the plugin libraries of the tests (Tests/Plugins: testkit, and C plugins that must
        // be refused or are malformed on purpose) for the test target it is applied to, into a
        // directory of its own: `testPluginDirectory` in that target.
        .plugin(name: "TestPluginLibraries", capability: .buildTool(), path: "Tests/TestPluginLibraries"),
        // The dashboard's pages and `report --html`: HTML and SVG rendered from the read model,
        // and the assets (CSS, script, icon) compiled in. No web framework: the server routes to it.
        .target(name: "JobRunnerPages", dependencies: ["JobRunnerCore"]),
        // The dashboard, JSON API, SSE and /metrics: reads through Core's read model, acts through
        // Core's operator interface.
        .target(
            name: "JobRunnerHTTP",
            dependencies: [
                "JobRunnerCore", API.json,
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "JobRunnerCLI",
            dependencies: [
                "JobRunnerCore", API.json, "JobRunnerYAML", "JobRunnerLMDB", "JobRunnerPostgres", "JobRunnerShell",
                "JobRunnerPluginHost", API.plugin, "JobRunnerHTTP", "JobRunnerPages",
                "CJobRunnerSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "jobrunner",
            dependencies: ["JobRunnerCLI"]
        ),
        // `make fuzz`: libFuzzer on job-file loading (built with -sanitize=fuzzer there only).
        .executableTarget(
            name: "jobrunner-fuzz",
            dependencies: ["JobRunnerYAML", "JobRunnerCore"],
            path: "Fuzz/JobFileFuzzer"
        ),
        .target(
            name: "JobRunnerTesting",
            dependencies: ["JobRunnerCore", "CJobRunnerSystem"]
        ),
        // The JSON layer, and every document written or read with it held to `Codable`.
        .testTarget(
            name: "JobRunnerJSONTests",
            dependencies: [
                API.json, "JobRunnerCore", "JobRunnerLMDB", "JobRunnerCLI", "JobRunnerPluginHost",
                API.plugin,
            ]
        ),
        .testTarget(
            name: "JobRunnerCoreTests",
            dependencies: ["JobRunnerCore", "JobRunnerTesting"],
            // cron-reference.json and the script that makes it (`make fixtures`).
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "JobRunnerYAMLTests",
            dependencies: ["JobRunnerYAML", "JobRunnerCore"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "JobRunnerLMDBTests",
            dependencies: ["JobRunnerLMDB", "JobRunnerCore", API.json, "JobRunnerTesting", "CLMDB", "CZlib"]
        ),
        .testTarget(
            name: "JobRunnerPostgresTests",
            dependencies: ["JobRunnerPostgres", "JobRunnerCore", "JobRunnerTesting"]
        ),
        .testTarget(
            name: "JobRunnerShellTests",
            dependencies: ["JobRunnerShell", "JobRunnerCore", "JobRunnerTesting"]
        ),
        .testTarget(
            name: "JobRunnerPluginHostTests",
            dependencies: ["JobRunnerPluginHost", API.plugin, "JobRunnerCore", "JobRunnerTesting"]
        ),
        .testTarget(
            name: "JobRunnerHTTPTests",
            dependencies: [
                "JobRunnerHTTP", "JobRunnerCore", "JobRunnerCLI", "JobRunnerLMDB", "JobRunnerTesting",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "JobRunnerPagesTests",
            dependencies: ["JobRunnerPages", "JobRunnerCore"]
        ),
        .testTarget(
            name: "JobRunnerCLITests",
            // API.logging: for TestPluginLibraries, which compiles testkit with it (PluginLogging/
            // is in the package graph through this dependency).
            dependencies: [
                "JobRunnerCLI", "JobRunnerLMDB", "JobRunnerCore", "JobRunnerPluginHost", API.logging,
                "JobRunnerTesting",
            ],
            plugins: ["TestPluginLibraries"]
        ),
    ]
)

// Strict settings for every target, in one place (as apple/swift-log does): Swift 6 mode (full
// concurrency checking), `any` spelled out, and a file sees only the members of modules it
// imports itself.
for target in package.targets where target.type != .system && target.type != .plugin {
    var settings = target.swiftSettings ?? []
    settings.append(.swiftLanguageMode(.v6))
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    // Imports are internal unless a file says `public import`: what a module shows of its
    // dependencies is deliberate. The executable and the command library export nothing.
    if ["jobrunner", "JobRunnerCLI"].contains(target.name) {
        settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    }
    target.swiftSettings = settings
}
