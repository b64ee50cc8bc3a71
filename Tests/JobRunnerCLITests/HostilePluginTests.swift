import Foundation
import Glibc
import Testing

/// Plugins that misbehave without crashing the loader (Tests/Plugins/hostile; issue 26, items
/// 10 and 11): their logs are capped and owner only whichever process runs them, what they
/// print never garbles the answer a child gives its runner, their messages and outputs are
/// bounded, and a parameter check that crashes, hangs or exits is a located validation error.
@Suite(.serialized) struct HostilePluginTests {
    static let quiet = ["SWIFT_BACKTRACE": "enable=no"]

    /// Every attempt log under the state directory's `logs/`, by job.
    static func logs(in workspace: borrowing Workspace) -> [String: String] {
        var found: [String: String] = [:]
        let logs = workspace.state + "/logs"
        for run in (try? FileManager.default.contentsOfDirectory(atPath: logs)) ?? [] {
            for job in (try? FileManager.default.contentsOfDirectory(atPath: "\(logs)/\(run)")) ?? [] {
                let path = "\(logs)/\(run)/\(job)/1.log"
                if FileManager.default.fileExists(atPath: path) { found[job] = path }
            }
        }
        return found
    }

    static func mode(_ path: String) -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { return -1 }
        return Int(info.st_mode) & 0o777
    }

    @Test(arguments: ["process", "process-per-attempt"])
    func anIsolatedHandlersLogIsCappedAndOwnerOnly(isolation: String) async throws {
        let workspace = try Workspace(files: [
            "loud.yaml": """
            jobs:
              loud:
                plugin: hostile.loud
                isolation: \(isolation)
            """
        ])
        let run = try await workspace.run(["run", "jobs", "--progress", "none"], environment: Self.quiet)
        #expect(run.status == 0, "\(run.stderr)")
        let log = try #require(Self.logs(in: workspace)["loud"])
        var info = stat()
        #expect(stat(log, &info) == 0)
        // 24 MiB written, 10 MiB kept with the line that says how much was cut.
        #expect(Int(info.st_size) <= 10 << 20, "\(info.st_size) bytes")
        let tail = try #require(FileHandle(forReadingAtPath: log))
        try tail.seek(toOffset: UInt64(5 << 20))
        let middle = String(decoding: tail.readData(ofLength: 4096), as: UTF8.self)
        #expect(middle.contains("bytes of output cut here to keep the log within 10485760 bytes"))
        let job = (log as NSString).deletingLastPathComponent
        #expect(Self.mode(log) == 0o600)
        #expect(Self.mode(job) == 0o700)
        #expect(Self.mode((job as NSString).deletingLastPathComponent) == 0o700)
    }

    @Test(arguments: ["inprocess", "process", "process-per-attempt"])
    func aHandlerPrintingOnStandardOutputSucceedsAndItsLineIsLogged(isolation: String) async throws {
        let workspace = try Workspace(files: [
            "print.yaml": """
            jobs:
              print:
                plugin: hostile.stdout
                isolation: \(isolation)
            """
        ])
        let run = try await workspace.run(["run", "jobs", "--progress", "none"], environment: Self.quiet)
        #expect(run.status == 0, "\(run.stderr)")
        let jobs = try await workspace.statusJobs()
        #expect(jobs["print"]?["state"] as? String == "succeeded", "\(jobs["print"] ?? [:])")
        if isolation != "inprocess" {
            let log = try #require(Self.logs(in: workspace)["print"])
            #expect(
                try String(contentsOfFile: log, encoding: .utf8).contains(
                    "hostile: a line on standard output"))
        }
    }

    @Test func aConstructorPrintingOnStandardOutputDoesNotSpoilTheDescription() async throws {
        let workspace = try Workspace(files: [
            "ok.yaml": """
            jobs:
              apart:
                plugin: hostile.ok
                isolation: process
            """
        ])
        let result = try await workspace.run(["validate", "jobs"], environment: ["HOSTILE_BANNER": "1"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func aLongMessageIsCutAndSaysSo() async throws {
        let workspace = try Workspace(files: [
            "long.yaml": """
            jobs:
              long:
                plugin: hostile.longmessage
            """
        ])
        let run = try await workspace.run(["run", "jobs", "--progress", "none"], environment: Self.quiet)
        #expect(run.status == 1)
        let reason = try #require(try await workspace.statusJobs()["long"]?["reason"] as? String)
        #expect(reason.utf8.count < 5000, "\(reason.utf8.count) bytes")
        #expect(
            reason.hasSuffix("[jobrunner: 95904 more bytes of the plugin's message cut]"),
            "\(reason.suffix(80))")
    }

    @Test(arguments: ["inprocess", "process", "process-per-attempt"])
    func outputsOverTheCapFailTheAttempt(isolation: String) async throws {
        let workspace = try Workspace(files: [
            "big.yaml": """
            jobs:
              big:
                plugin: hostile.bigoutputs
                isolation: \(isolation)
              after:
                needs: [big]
                run: 'true'
            """
        ])
        let run = try await workspace.run(["run", "jobs", "--progress", "none"], environment: Self.quiet)
        #expect(run.status == 1)
        let jobs = try await workspace.statusJobs()
        #expect(jobs["big"]?["state"] as? String == "failed")
        #expect(
            jobs["big"]?["reason"] as? String
                == "outputs too large: the plugin's response carries 2097157 bytes of outputs, at most 1048576 allowed",
            "\(jobs["big"] ?? [:])")
        #expect(jobs["after"]?["state"] as? String == "blocked")
    }

    /// A check that crashes or exits: a validation error at that job's `with:`, whatever the
    /// isolation, and the jobs whose checks behave are not blamed.
    @Test func aParameterCheckThatCrashesOrExitsIsALocatedError() async throws {
        let workspace = try Workspace(files: [
            "checks.yaml": """
            jobs:
              fine:
                plugin: hostile.ok
                with: { mode: calm }
              crashes:
                plugin: hostile.ok
                with: { mode: segv }
              exits:
                plugin: hostile.ok
                with: { mode: exit }
              refused:
                plugin: hostile.ok
                isolation: process
                with: { mode: refuse }
              alsoFine:
                plugin: hostile.ok
                isolation: process
                with: { mode: quiet }
            """
        ])
        for command in [["validate", "jobs"], ["run", "jobs"]] {
            let result = try await workspace.run(command, environment: Self.quiet)
            #expect(!result.signalled && result.status == 2, "\(command): \(result.status) \(result.stderr)")
            let lines = result.stderr.split(separator: "\n").map(String.init)
            let crash = lines.first { $0.contains("job 'crashes'") } ?? ""
            #expect(crash.hasPrefix("jobs/checks.yaml:7:"), "\(crash)")
            #expect(
                crash.contains("its check of the job's with: parameters (check_parameters) crashed (SIGSEGV"),
                "\(crash)")
            let exit = lines.first { $0.contains("job 'exits'") } ?? ""
            #expect(exit.hasPrefix("jobs/checks.yaml:10:"), "\(exit)")
            #expect(exit.contains("ended its process without an answer (exit status 0)"), "\(exit)")
            #expect(lines.contains { $0.contains("job 'refused'") && $0.contains("refused by hostile") })
            #expect(
                !lines.contains { $0.contains("job 'fine'") || $0.contains("job 'alsoFine'") }, "\(lines)")
            #expect(lines.last == "3 errors; nothing was run", "\(lines)")
        }
    }

    @Test func aParameterCheckThatNeverReturnsIsStoppedAndReported() async throws {
        let workspace = try Workspace(files: [
            "loop.yaml": """
            jobs:
              loops:
                plugin: hostile.ok
                with: { mode: loop }
            """
        ])
        let result = try await workspace.run(
            ["validate", "jobs"], environment: ["JOBRUNNER_PLUGIN_LOAD_TIMEOUT": "1"])
        #expect(!result.signalled && result.status == 2, "\(result.status) \(result.stderr)")
        #expect(
            result.stderr.contains(
                "its check of the job's with: parameters (check_parameters) was still running after 1s and was stopped"
            ),
            "\(result.stderr)")
    }

    @Test func eventsThatCannotBeWrittenAreSaidAndExitThree() async throws {
        let workspace = try Workspace(files: [
            "one.yaml": """
            jobs:
              one:
                run: 'true'
            """
        ])
        let run = try await workspace.run(
            ["run", "jobs", "--progress", "none", "--events", "/dev/full"], environment: [:])
        #expect(run.status == 3, "\(run.status) \(run.stderr)")
        #expect(
            run.stderr.contains(
                "event lines could not be written to the events file /dev/full: No space left on device"),
            "\(run.stderr)")
        let jobs = try await workspace.statusJobs()
        #expect(jobs["one"]?["state"] as? String == "succeeded")
    }
}
