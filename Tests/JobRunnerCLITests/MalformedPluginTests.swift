// `stat` and `timespec`: with SwiftNIO in the build (the dashboard), their definitions are found in
// CDispatch's module, which MemberImportVisibility then asks to be imported.
import CDispatch
import Foundation
import JobRunnerPluginHost
import Testing

@testable import JobRunnerCLI

/// Plugin libraries that crash or lie (Tests/Plugins/malformed, and a truncated copy of a real
/// library): each is a located validation error or a failed attempt, and never the end of the
/// runner. Such a library is loaded in a child process before the runner ever loads it.
@Suite(.serialized) struct MalformedPluginTests {
    static let buildDirectory = PluginTests.buildDirectory
    /// Crashes of the child are not worth a Swift backtrace each.
    static let quiet = ["SWIFT_BACKTRACE": "enable=no"]

    /// A library that crashes whoever loads it, and what the error says happened.
    struct Case: Sendable, CustomStringConvertible {
        var plugin: String
        /// What the error says about the library, past "plugin 'NAME' (PATH) ".
        var says: [String]
        var description: String { plugin }
    }

    /// The bad libraries. (Under a sanitizer, `make asan` and `make tsan` leave SIGSEGV and SIGBUS
    /// to the process, so a crash is still a signal.)
    static let crashing = ["crashed while being loaded in a separate process"]
    static let cases: [Case] = [
        Case(plugin: "truncated", says: crashing + ["cannot load plugin"]),
        Case(plugin: "hugecount", says: ["has a malformed descriptor: it claims 1099511627776 handlers"]),
        Case(plugin: "wildptr", says: crashing),
        Case(plugin: "ctorabort", says: crashing),
        Case(plugin: "nullentry", says: crashing),
        Case(plugin: "datasymbol", says: crashing),
    ]

    /// A workspace whose job file names `plugin.run` once in process and once isolated, with
    /// `plugins/libtruncated.so`: the first 4 KiB of a real plugin library.
    func workspace(for plugin: String) throws -> Workspace {
        let workspace = try Workspace(files: [
            "bad.yaml": """
            jobs:
              inside:
                plugin: \(plugin).run
              apart:
                plugin: \(plugin).run
                isolation: process
              fine:
                run: echo fine
            """
        ])
        try FileManager.default.createDirectory(
            atPath: workspace.root + "/plugins", withIntermediateDirectories: true)
        let real = try Data(contentsOf: URL(fileURLWithPath: Self.buildDirectory + "/libhello.so"))
        try real.prefix(4096).write(to: URL(fileURLWithPath: workspace.root + "/plugins/libtruncated.so"))
        return workspace
    }

    func path(of plugin: String, in workspace: borrowing Workspace) -> String {
        plugin == "truncated"
            ? workspace.root + "/plugins/libtruncated.so" : testPluginDirectory + "/lib\(plugin).so"
    }

    @Test(arguments: cases) func validateReportsABadLibraryAtEachJobsPluginLine(_ bad: Case) async throws {
        let workspace = try workspace(for: bad.plugin)
        let result = try await workspace.run(["validate", "jobs"], environment: Self.quiet)
        #expect(!result.signalled && result.status == 2, "\(result.status) \(result.stderr)")
        let errors = result.stderr.split(separator: "\n").map(String.init)
        let named = "plugin '\(bad.plugin)' (\(path(of: bad.plugin, in: workspace)))"
        for (job, position) in [("inside", "3:13"), ("apart", "5:13")] {
            let error = errors.first { $0.hasPrefix("jobs/bad.yaml:\(position): error: job '\(job)': ") }
            #expect(
                error.map { $0.contains(named) || $0.contains("cannot load plugin") } == true, "\(errors)")
            #expect(error.map { line in bad.says.contains { line.contains($0) } } == true, "\(errors)")
        }
        #expect(errors.last == "2 errors; nothing was run", "\(errors)")
    }

    @Test(arguments: cases) func runRefusesABadLibraryBeforeRunningAnything(_ bad: Case) async throws {
        let workspace = try workspace(for: bad.plugin)
        let result = try await workspace.run(["run", "jobs"], environment: Self.quiet)
        #expect(!result.signalled && result.status == 2, "\(result.status) \(result.stderr)")
        #expect(result.stderr.contains("jobs/bad.yaml:5:13: error: job 'apart': "), "\(result.stderr)")
        #expect(result.stderr.contains("nothing was run"))
    }

    /// `plugins` lists a bad library among those it could not load, and goes on.
    @Test func pluginsListsBadLibrariesAsNotLoadable() async throws {
        let workspace = try workspace(for: "truncated")
        let result = try await workspace.run(["plugins", "jobs"], environment: Self.quiet)
        #expect(!result.signalled && result.status == 0, "\(result.status) \(result.stderr)")
        for bad in Self.cases {
            #expect(result.stdout.contains("  \(bad.plugin): "), "\(result.stdout)")
        }
        #expect(result.stdout.contains("hello.greet"))
    }

    /// A constructor that never returns (`CTORHANG=1`): the child is stopped after
    /// `$JOBRUNNER_PLUGIN_LOAD_TIMEOUT` and the job's line says so.
    @Test func aLibraryThatNeverFinishesLoadingIsStopped() async throws {
        let workspace = try Workspace(files: [
            "hang.yaml": """
            jobs:
              hang:
                plugin: ctorhang.run
                isolation: process
            """
        ])
        let result = try await workspace.run(
            ["validate", "jobs"], environment: ["JOBRUNNER_PLUGIN_LOAD_TIMEOUT": "1", "CTORHANG": "1"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "jobs/hang.yaml:3:13: error: job 'hang': plugin 'ctorhang' (\(testPluginDirectory)/libctorhang.so) "
                    + "was still loading after 1s in a separate process and was stopped"), "\(result.stderr)")
    }

    /// A library replaced by a crashing one after validation: the isolated job's attempt fails,
    /// the runner goes on with the rest and is never loaded the new library itself.
    @Test func aLibraryThatTurnsBadDuringARunFailsOnlyTheIsolatedAttempt() async throws {
        let workspace = try Workspace(files: [
            "swap.yaml": """
            jobs:
              swap:
                run: |
                  cp "\(testPluginDirectory)/libwildptr.so" "$PLUGINS/libhello.so.new"
                  mv "$PLUGINS/libhello.so.new" "$PLUGINS/libhello.so"
              greet:
                needs: [swap]
                plugin: hello.greet
                isolation: process
              after:
                needs: [greet]
                run: echo never
              other:
                needs: [swap]
                run: echo other
            """
        ])
        try FileManager.default.createDirectory(
            atPath: workspace.root + "/plugins", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Self.buildDirectory + "/libhello.so", toPath: workspace.root + "/plugins/libhello.so")
        let run = try await workspace.run(
            ["run", "jobs"], environment: Self.quiet.merging(["PLUGINS": workspace.root + "/plugins"]) { $1 })
        #expect(!run.signalled && run.status == 1, "\(run.status) \(run.stderr)")
        let jobs = try await workspace.statusJobs()
        let reason = jobs["greet"]?["reason"] as? String ?? ""
        #expect(jobs["greet"]?["state"] as? String == "failed")
        #expect(
            reason.contains("signal 11") || reason.contains("exited 1") || reason.contains("cannot load it"),
            "\(reason)")
        #expect(jobs["after"]?["state"] as? String == "blocked")
        #expect(jobs["other"]?["state"] as? String == "succeeded")
    }

    /// `invoke` that claims a 1 TiB response for a 2-byte buffer: refused unread, in process
    /// and apart; the runner goes on.
    @Test func aResponseLongerThanTheLimitFailsTheAttempt() async throws {
        let workspace = try Workspace(files: [
            "liar.yaml": """
            jobs:
              inside:
                plugin: liar.huge
              apart:
                plugin: liar.huge
                isolation: process
              fine:
                plugin: liar.ok
            """
        ])
        let run = try await workspace.run(["run", "jobs"], environment: Self.quiet)
        #expect(!run.signalled && run.status == 1, "\(run.status) \(run.stderr)")
        let jobs = try await workspace.statusJobs()
        for job in ["inside", "apart"] {
            #expect(jobs[job]?["state"] as? String == "failed")
            #expect(
                jobs[job]?["reason"] as? String
                    == "the plugin's response claims 1099511627776 bytes, more than the 16 MiB a response may have",
                "\(jobs[job] ?? [:])")
        }
        #expect(jobs["fine"]?["state"] as? String == "succeeded")
    }

    /// `invoke` that claims 2^63 bytes, a length no signed integer holds: refused with the same
    /// sentence, where converting it trapped (in process) or killed the worker (apart).
    @Test func aResponseLengthOfTwoToTheSixtyThirdFailsTheAttempt() async throws {
        let workspace = try Workspace(files: [
            "liar.yaml": """
            jobs:
              inside:
                plugin: liar.enormous
              apart:
                plugin: liar.enormous
                isolation: process
              alone:
                plugin: liar.enormous
                isolation: process-per-attempt
            """
        ])
        let run = try await workspace.run(["run", "jobs"], environment: Self.quiet)
        #expect(!run.signalled && run.status == 1, "\(run.status) \(run.stderr)")
        let jobs = try await workspace.statusJobs()
        for job in ["inside", "apart", "alone"] {
            #expect(
                jobs[job]?["reason"] as? String
                    == "the plugin's response claims 9223372036854775808 bytes, more than the 16 MiB a response may have",
                "\(job): \(jobs[job] ?? [:])")
        }
    }

    /// A parameter check whose message has no NUL: read no further than 64 KiB, reported at the
    /// job's `with:` whether the check runs here or apart.
    @Test func anUnterminatedParameterMessageIsReadNoFurtherThanTheLimit() async throws {
        let workspace = try Workspace(files: [
            "liar.yaml": """
            jobs:
              inside:
                plugin: liar.unterminated
                with: { a: 1 }
              apart:
                plugin: liar.unterminated
                isolation: process
                with: { a: 1 }
            """
        ])
        let result = try await workspace.run(["validate", "jobs"], environment: Self.quiet)
        #expect(!result.signalled && result.status == 2, "\(result.status) \(result.stderr)")
        let message =
            "with: does not suit liar.unterminated: the plugin's parameter check answered with a message that "
            + "has no NUL within 64 KiB (a bug in the plugin)"
        #expect(
            result.stderr.contains("jobs/liar.yaml:4:11: error: job 'inside': \(message)"), "\(result.stderr)"
        )
        #expect(
            result.stderr.contains("jobs/liar.yaml:8:11: error: job 'apart': \(message)"), "\(result.stderr)")
    }

    /// A library is described once per version of its file: again only when it changed.
    @Test func aLibraryIsDescribedOncePerVersion() throws {
        let workspace = try Workspace(files: [:])
        let counter = workspace.root + "/count"
        let script = workspace.root + "/counting-jobrunner"
        try writeExecutable(
            "#!/bin/sh\necho started >> '\(counter)'\nexec '\(jobrunnerBinary)' \"$@\"\n", to: script)
        let library = workspace.root + "/libhello.so"
        try FileManager.default.copyItem(atPath: Self.buildDirectory + "/libhello.so", toPath: library)
        let prober = PluginVetting.prober(executable: script, timeout: .seconds(60))
        func children() -> Int { workspace.read("count").split(separator: "\n").count }

        #expect(try prober("hello", library, []).get().plugin.handlers == ["greet", "fail"])
        #expect(try prober("hello", library, []).get().plugin.name == "hello")
        #expect(children() == 1)
        var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, library, &times, 0) == 0)
        #expect(try prober("hello", library, []).get().plugin.name == "hello")
        #expect(children() == 2)
        // Parameter checks are asked each time: their answers depend on the parameters.
        let check = PluginParameterCheck(handler: "greet", parameters: "{}")
        #expect(try prober("hello", library, [check]).get().verdicts == [nil])
        #expect(children() == 3)
    }
}
