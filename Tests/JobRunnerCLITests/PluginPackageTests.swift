import Foundation
import Glibc
import Testing

/// The plugin API as a package of its own (PluginAPI/): a plugin package depends on it alone and
/// resolves nothing else, and a key of `with:` that a Swift handler does not read is a
/// validation error at its line, with a did-you-mean.
@Suite struct PluginPackageTests {
    /// The repository this test file is in.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// examples/greet-plugin, copied with PluginAPI/ and nothing else (as a plugin author's
    /// checkout would hold them), built with `swift build`: what it resolved is recorded in its
    /// Package.resolved and its checkouts, and neither names any of jobrunner's dependencies.
    /// The library it builds is then found, validated and run by the built jobrunner.
    ///
    /// It builds a Swift package (minutes of both cores), so it runs on its own after the suite
    /// (`make test` sets JOBRUNNER_PLUGIN_PACKAGE_TEST): beside the other tests it starved them,
    /// and their guards ran out (the store contract's, a hook's timeout).
    @Test(
        .timeLimit(.minutes(30)),
        .enabled(
            if: ProcessInfo.processInfo.environment["JOBRUNNER_PLUGIN_PACKAGE_TEST"] != nil,
            "builds a package: make test runs it after the suite"))
    func theExamplePluginPackageResolvesOnlyThePluginAPI() async throws {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("greet-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.createDirectory(atPath: copy + "/examples", withIntermediateDirectories: true)
        for (from, to) in [("PluginAPI", "PluginAPI"), ("examples/greet-plugin", "examples/greet-plugin")] {
            try FileManager.default.copyItem(atPath: Self.repository + "/" + from, toPath: copy + "/" + to)
        }
        let package = copy + "/examples/greet-plugin"
        // A copy made from a working tree may hold a build of its own: a clean one has none.
        try? FileManager.default.removeItem(atPath: package + "/.build")
        try? FileManager.default.removeItem(atPath: copy + "/PluginAPI/.build")
        let build = try Self.swift(["build", "--package-path", package], in: copy)
        #expect(build.status == 0, "\(build.stdout)")

        let resolved = (try? String(contentsOfFile: package + "/Package.resolved", encoding: .utf8)) ?? ""
        for dependency in [
            "yams", "swift-argument-parser", "swift-log", "swift-service-lifecycle", "hummingbird",
        ] {
            #expect(!resolved.lowercased().contains(dependency), "resolved \(dependency): \(resolved)")
        }
        #expect(!resolved.contains("\"identity\""), "resolves no package at all: \(resolved)")
        let checkouts =
            (try? FileManager.default.contentsOfDirectory(atPath: package + "/.build/checkouts")) ?? []
        #expect(checkouts.isEmpty, "fetched \(checkouts)")
        let library = package + "/.build/debug/libgreet.so"
        #expect(FileManager.default.fileExists(atPath: library), "\(build.stdout)")

        // The library works with the jobrunner built from the same sources; a typo in with: is
        // refused at its line, with the handler's own parameter as the suggestion.
        let workspace = try Workspace(files: [
            "greet.yaml": """
            jobs:
              greet-ada:
                plugin: greet.hello
                with:
                  name: Ada
                  excitd: true
            """
        ])
        let paths = ["JOBRUNNER_PLUGIN_PATH": package + "/.build/debug"]
        let validate = try await workspace.run(["validate", "jobs"], environment: paths)
        #expect(validate.status == 2)
        #expect(
            validate.stderr.contains(
                "greet.yaml:6:7: error: job 'greet-ada': with: does not suit greet.hello: unknown parameter 'excitd'"
            ),
            "\(validate.stderr)")
        #expect(validate.stderr.contains("did you mean 'excited'?"), "\(validate.stderr)")
        try "jobs:\n  greet-ada:\n    plugin: greet.hello\n    with: { name: Ada, excited: true }\n".write(
            toFile: workspace.jobs + "/greet.yaml", atomically: true, encoding: .utf8)
        let run = try await workspace.run(["run", "jobs", "--progress", "plain"], environment: paths)
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(try await workspace.run("logs", "greet-ada").stdout.contains("Hello, Ada!"))
    }

    /// A key no field of the handler's Parameters reads is an error at its line; the keys it
    /// reads, required or optional, are fine.
    @Test func anUnknownWithKeyIsAnErrorAtItsLineWithADidYouMean() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            jobs:
              fine:
                plugin: testkit.echo
                with: { message: hi, count: 2 }
              typo:
                plugin: testkit.echo
                with:
                  message: hi
                  cuont: 2
              apart:
                plugin: testkit.echo
                isolation: process
                with: { message: hi, mesage: again }
              none:
                plugin: testkit.skip
                with: { anything: 1 }
            """
        ])
        let validate = try await workspace.run("validate", "jobs")
        #expect(validate.status == 2)
        let errors = validate.stderr.split(separator: "\n").map(String.init)
        #expect(
            errors.contains {
                $0.contains(
                    "jobs.yaml:9:7: error: job 'typo': with: does not suit testkit.echo: unknown parameter 'cuont'"
                )
                    && $0.hasSuffix("did you mean 'count'?")
            }, "\(errors)")
        #expect(
            errors.contains {
                $0.contains(
                    "jobs.yaml:13:26: error: job 'apart': with: does not suit testkit.echo: unknown parameter 'mesage'"
                )
                    && $0.hasSuffix("did you mean 'message'?")
            }, "checked in the worker too: \(errors)")
        #expect(!validate.stderr.contains("'fine'"), "\(validate.stderr)")
        #expect(
            !validate.stderr.contains("'none'"), "a handler without parameters takes any: \(validate.stderr)")
    }

    /// Runs `swift` with `arguments` in `directory`.
    static func swift(_ arguments: [String], in directory: String) throws -> Finished {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        // One pipe for both, read to its end: two read one after the other could fill and block.
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Finished(
            status: process.terminationStatus, stdout: String(decoding: output, as: UTF8.self), stderr: "")
    }
}
