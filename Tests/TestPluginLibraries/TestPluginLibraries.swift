import Foundation
import PackagePlugin

/// Builds the plugin libraries of jobrunner's own tests, `Tests/Plugins/…/<name>/` → `lib<name>.so`,
/// into this plugin's work directory, when the test target it is applied to is built (by
/// `swift build --build-tests` or `swift test`, never by `swift build` alone), and gives that
/// target a constant `testPluginDirectory` saying where they are.
///
/// They are not products of the package, so no build puts them beside the `jobrunner` binary,
/// where its plugin search would find them (`jobrunner plugins` listed the malformed ones as
/// "not loadable" next to a release build) and `make install` could copy them. A directory with
/// `.c` files is a C plugin (it sees `jobrunner_plugin.h`); one with `.swift` files a Swift
/// plugin that imports JobRunnerPluginAPI, compiled here with the API's module and the modules
/// it depends on (swift-log's `Logging`), taken from the package graph.
@main struct TestPluginLibraries: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        let work = context.pluginWorkDirectoryURL
        let libraries = work.appending(path: "lib")
        let plugins = try Self.testPlugins(
            under: context.package.directoryURL.appending(path: "Tests/Plugins"))
        // The API and its swift-log bridge (testkit logs through `context.logger`), from the
        // packages PluginAPI/ and PluginLogging/, which are ours too.
        let api = try ["JobRunnerPluginAPI", "JobRunnerPluginLogging"].map {
            try Self.target(named: $0, in: context.package)
        }
        let (swiftModules, headerDirectories) = Self.dependencies(of: api)
        let ownPackages =
            [context.package]
            + context.package.dependencies.map(\.package).filter {
                ["PluginAPI", "PluginLogging"].contains($0.displayName)
            }
        let ownTargets = Set(ownPackages.flatMap(\.targets).map(\.id))

        var cScript = ["set -e", "mkdir -p \(quoted(libraries))"]
        // Libraries of the same names that earlier versions of this package built as products,
        // beside the binaries of its build directory (`<scratch>/<triple>/<configuration>/`; the
        // work directory is `<scratch>/plugins/outputs/…`): gone, so that no plugin search finds them.
        var scratch = work
        while scratch.pathComponents.count > 1 && scratch.lastPathComponent != "plugins" {
            scratch = scratch.deletingLastPathComponent()
        }
        scratch = scratch.deletingLastPathComponent()
        for plugin in plugins {
            for configuration in ["debug", "release"] {
                cScript.append(
                    "rm -f \(quoted(scratch.path))/*/\(configuration)/lib\(plugin.name).so 2>/dev/null || true"
                )
            }
        }
        let clang = try context.tool(named: "clang").url
        let cPlugins = plugins.filter { $0.language == .c }
        for plugin in cPlugins {
            cScript.append(
                ([clang.path, "-shared", "-fPIC"] + headerDirectories.flatMap { ["-I", $0.path] }
                    + plugin.sources.map(\.path) + [
                        "-o", libraries.appending(path: "lib\(plugin.name).so").path,
                    ])
                    .map(quoted).joined(separator: " "))
        }
        let directoryFile = work.appending(path: "TestPluginDirectory.swift")
        let declaration = """
            /// Where the build put the plugin libraries of jobrunner's own tests (`Tests/Plugins`):
            /// built for the tests alone, by the TestPluginLibraries build tool plugin.
            let testPluginDirectory = "\(libraries.path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))"
            """
        cScript.append("printf '%s\\n' \(quoted(declaration)) > \(quoted(directoryFile))")

        let swiftc = try context.tool(named: "swiftc").url
        let modules = work.appending(path: "modules")
        var swiftScript = ["set -e", "mkdir -p \(quoted(libraries)) \(quoted(modules))"]
        for header in headerDirectories {
            // The module map SwiftPM makes for a C target whose include/ has none.
            guard let clangTarget = header.clangModule else { continue }
            swiftScript.append(
                "printf 'module %s {\\n    umbrella \"%s\"\\n    export *\\n}\\n' \(quoted(clangTarget)) \(quoted(header.path)) > \(quoted(modules.appending(path: "\(clangTarget).modulemap")))"
            )
        }
        let moduleMaps = headerDirectories.compactMap { header in
            header.clangModule.map {
                "-Xcc -fmodule-map-file=\(quoted(modules.appending(path: "\($0).modulemap")))"
            }
        }
        // The modules the API depends on first; each a static library and a .swiftmodule.
        for module in swiftModules {
            let ours = ownTargets.contains(module.id)
            swiftScript.append(
                ([
                    quoted(swiftc.path), "-parse-as-library", "-module-name", module.name, "-package-name",
                    module.name,
                ]
                    + ["-swift-version", "6", "-I", quoted(modules.path)] + moduleMaps
                    + (ours ? Self.strictFeatures : ["-suppress-warnings"])
                    + module.conditions.map { "-D\($0)" }
                    + [
                        "-emit-module", "-emit-module-path",
                        quoted(modules.appending(path: "\(module.name).swiftmodule")),
                    ]
                    + [
                        "-emit-library", "-static", "-o",
                        quoted(modules.appending(path: "lib\(module.name).a")),
                    ]
                    + module.sources.map { quoted($0.path) }).joined(separator: " "))
        }
        let swiftPlugins = plugins.filter { $0.language == .swift }
        for plugin in swiftPlugins {
            swiftScript.append(
                ([quoted(swiftc.path), "-parse-as-library", "-module-name", "\(plugin.name)_test_plugin"]
                    + ["-swift-version", "6", "-I", quoted(modules.path)] + moduleMaps + Self.strictFeatures
                    + ["-emit-library", "-o", quoted(libraries.appending(path: "lib\(plugin.name).so"))]
                    + ["-L", quoted(modules.path)] + swiftModules.reversed().map { "-l\($0.name)" }
                    + plugin.sources.map { quoted($0.path) }).joined(separator: " "))
        }
        let swiftMarker = work.appending(path: "TestSwiftPlugins.swift")
        swiftScript.append(
            "printf '%s\\n' \(quoted("// Built: \(swiftPlugins.map { "lib\($0.name).so" }.joined(separator: ", "))")) > \(quoted(swiftMarker))"
        )

        let headers = headerDirectories.flatMap { Self.files(under: $0.url, suffix: ".h") }
        return [
            .buildCommand(
                displayName:
                    "Building the C plugins of the tests: \(cPlugins.map(\.name).joined(separator: ", "))",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", cScript.joined(separator: "\n")],
                inputFiles: cPlugins.flatMap(\.sources) + headers, outputFiles: [directoryFile]),
            .buildCommand(
                displayName:
                    "Building the Swift plugins of the tests: \(swiftPlugins.map(\.name).joined(separator: ", "))",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", swiftScript.joined(separator: "\n")],
                inputFiles: swiftPlugins.flatMap(\.sources) + swiftModules.flatMap(\.sources) + headers,
                outputFiles: [swiftMarker]),
        ]
    }

    /// The package's own settings for its Swift targets (Package.swift), for the code of ours
    /// compiled here.
    static let strictFeatures = [
        "-enable-upcoming-feature", "ExistentialAny", "-enable-upcoming-feature", "MemberImportVisibility",
    ]

    struct TestPlugin {
        enum Language { case c, swift }
        var name: String
        var language: Language
        var sources: [URL]
    }

    /// Every directory under `root` holding `.c` or `.swift` files: one plugin each, named after it.
    static func testPlugins(under root: URL) throws -> [TestPlugin] {
        let entries = try FileManager.default.subpathsOfDirectory(atPath: root.path).sorted()
        var plugins: [TestPlugin] = []
        for entry in entries {
            let directory = root.appending(path: entry)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory),
                isDirectory.boolValue
            else { continue }
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            let c = names.filter { $0.hasSuffix(".c") }.map { directory.appending(path: $0) }
            let swift = names.filter { $0.hasSuffix(".swift") }.map { directory.appending(path: $0) }
            if !c.isEmpty {
                plugins.append(TestPlugin(name: directory.lastPathComponent, language: .c, sources: c))
            }
            if !swift.isEmpty {
                plugins.append(
                    TestPlugin(name: directory.lastPathComponent, language: .swift, sources: swift))
            }
        }
        return plugins
    }

    struct SwiftModule {
        var id: String
        var name: String
        var conditions: [String]
        var sources: [URL]
    }

    struct HeaderDirectory {
        var url: URL
        /// The C module it is, when the directory has no module map of its own.
        var clangModule: String?
        var path: String { url.path }
    }

    /// The Swift modules `targets` need, themselves last, each after those it imports; and the
    /// public header directories of the C modules among them.
    static func dependencies(of targets: [any Target]) -> ([SwiftModule], [HeaderDirectory]) {
        var modules: [SwiftModule] = []
        var headers: [HeaderDirectory] = []
        var seen = Set<String>()
        func visit(_ target: any Target) {
            guard seen.insert(target.id).inserted else { return }
            for dependency in target.dependencies {
                switch dependency {
                case .target(let needed): visit(needed)
                case .product(let product): product.targets.forEach(visit)
                @unknown default: break
                }
            }
            if let swift = target as? SwiftSourceModuleTarget {
                modules.append(
                    SwiftModule(
                        id: swift.id, name: swift.moduleName, conditions: swift.compilationConditions,
                        sources: swift.sourceFiles(withSuffix: "swift").map(\.url)))
            } else if let clang = target as? ClangSourceModuleTarget,
                let include = clang.publicHeadersDirectoryURL
            {
                let hasMap = FileManager.default.fileExists(
                    atPath: include.appending(path: "module.modulemap").path)
                headers.append(HeaderDirectory(url: include, clangModule: hasMap ? nil : clang.moduleName))
            }
        }
        targets.forEach(visit)
        return (modules, headers)
    }

    struct MissingTarget: Error, CustomStringConvertible {
        var name: String
        var description: String {
            "TestPluginLibraries: no target \(name) in the package or its dependencies"
        }
    }

    /// The target called `name` in `package` or any package it depends on.
    static func target(named name: String, in package: Package) throws -> any Target {
        if let found = package.targets.first(where: { $0.name == name }) { return found }
        for dependency in package.dependencies {
            if let found = try? target(named: name, in: dependency.package) { return found }
        }
        throw MissingTarget(name: name)
    }

    static func files(under directory: URL, suffix: String) -> [URL] {
        ((try? FileManager.default.subpathsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(suffix) }.sorted().map { directory.appending(path: $0) }
    }
}

/// `text` as one word of a `/bin/sh` command line.
private func quoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

private func quoted(_ url: URL) -> String { quoted(url.path) }
