import Foundation
import Glibc
import JobRunnerCore
import Testing

@testable import JobRunnerCLI

/// What a new user reads at the terminal (issue 23, item 6): a crashed plugin's failure tail
/// leads with its fatal error, waits are announced once, the stop summary says how to resume,
/// and an interrupted attempt's log says so at its end.
@Suite struct NewUserMessagesTests {
    /// A crash report as Swift's runtime writes it after a `fatalError`: the registers and the
    /// image list are not what a failure tail should show.
    static let crashReport = [
        "converting 3 files",
        "Greet/Greet.swift:12: Fatal error: crashed on purpose",
        "",
        "💣 Program crashed: Illegal instruction at 0x00007f2b1c0a1e2c",
        "",
        "Thread 1 crashed:",
        "",
        "0 0x00007f2b1c0a1e2c Hello.run(_:) + 140 in libgreet.so",
        "1 0x00007f2b1c0a2a10 closure #1 in HandlerEntry.init<A>(_:) + 96 in libgreet.so",
        "",
        "Registers:",
        "rax 0x0000000000000000  0",
        "rdx 0x0000000000000001  1",
        "",
        "Images (23 omitted):",
        "0x00007f2b1c000000–0x00007f2b1c0b2000 libgreet.so",
    ]

    @Test func aCrashsTailLeadsWithItsFatalErrorAndLeavesOutRegistersAndImages() throws {
        let tail = try #require(LogTail.crashTail(of: Self.crashReport, count: LogTail.lineCount))
        #expect(tail.first == "Greet/Greet.swift:12: Fatal error: crashed on purpose")
        #expect(tail.contains("Thread 1 crashed:"))
        #expect(!tail.contains { $0.hasPrefix("rax") || $0.hasPrefix("Images") || $0.hasPrefix("Registers") })
        #expect(tail.last == "… 6 more lines of crash report in the log", "\(tail)")
        #expect(
            LogTail.crashTail(of: ["plain failure", "exit 1"], count: 20) == nil, "no crash: the usual tail")
    }

    /// A report of several threads lists the others first: the tail shows the crashed one's
    /// frames, not the first threads' (the crashed thread 3 was only in `logs`).
    @Test func aCrashsTailShowsTheCrashedThreadOfSeveral() throws {
        func thread(_ header: String, _ name: String) -> [String] {
            [header, ""] + (0..<8).map { "\($0) 0x00007f2b1c0a1e2c \(name) frame \($0)" } + [""]
        }
        let report =
            [
                "Greet/Greet.swift:12: Fatal error: crashed on purpose", "",
                "💣 Program crashed: Illegal instruction", "",
            ]
            + thread("Thread 0:", "idle") + thread("Thread 1 \"pool\":", "pool")
            + thread("Thread 3 crashed:", "Hello.run") + thread("Thread 4:", "other") + [
                "Registers:", "rax 0x0",
            ]
        let tail = try #require(LogTail.crashTail(of: report, count: LogTail.lineCount))
        #expect(tail.first == "Greet/Greet.swift:12: Fatal error: crashed on purpose")
        #expect(tail.contains("💣 Program crashed: Illegal instruction"), "\(tail)")
        #expect(tail.contains("Thread 3 crashed:"), "\(tail)")
        #expect(tail.contains("7 0x00007f2b1c0a1e2c Hello.run frame 7"), "\(tail)")
        #expect(
            !tail.contains { $0.contains("idle frame") || $0.contains("pool frame") || $0.contains("other") })
        #expect(tail.count <= LogTail.lineCount)
    }

    /// The same through a real crash: a plugin's `fatalError` on a worker (`isolation: process`).
    @Test func aCrashedPluginsFailureTailStartsWithTheFatalErrorLine() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            jobs:
              crash:
                plugin: testkit.crash
                isolation: process
            """
        ])
        let run = try await workspace.run("run", "jobs", "--progress", "plain")
        #expect(run.status == 1)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let failed = try #require(lines.firstIndex { $0.contains("failed      crash") }, "\(run.stdout)")
        let tail = lines[(failed + 1)...].prefix { $0.hasPrefix("    │") }
        #expect(
            tail.first?.contains("Fatal error: testkit.crash was asked to crash") == true, "\(run.stdout)")
        #expect(!tail.contains { $0.contains("Registers:") || $0.contains("Images (") }, "\(run.stdout)")
    }

    @Test func waitsForTheInternetAConstraintOrASuspendedPipelineAreAnnouncedOnce() {
        let waits = WaitAnnouncements()
        let now = Date(timeIntervalSince1970: 0)
        func event(_ job: String?, _ kind: RunEvent.Kind, _ reason: String?, pipeline: String? = nil)
            -> String?
        {
            let event = RunEvent(
                time: now, run: "r", job: job, kind: kind, reason: reason, pipeline: pipeline)
            guard waits.shows(event) else { return nil }
            return PlainProgress.line(for: event)
        }
        #expect(event("a", .waiting, "internet")?.hasPrefix("waiting     a: offline;") == true)
        #expect(event("b", .waiting, "internet") == nil, "once")
        #expect(
            event("c", .waiting, "constraint:token")
                == "waiting     c: constraint token is not satisfied; its satisfy runs while the jobs that need it wait"
        )
        #expect(event("d", .waiting, "constraint:token") == nil)
        #expect(event("e", .waiting, "needs:a") == nil, "an ordinary wait: no line")
        let stalled = event(nil, .waiting, "suspended", pipeline: "ci")
        #expect(stalled?.contains("pipeline ci is suspended") == true)
        #expect(event(nil, .waiting, "suspended", pipeline: "ci") == nil, "the 30 s reminder is not repeated")
        _ = event(nil, .resumed, nil, pipeline: "ci")
        #expect(event(nil, .waiting, "suspended", pipeline: "ci") != nil, "suspended again: told again")
    }

    /// Ctrl-C on a run: jobs waiting offline were announced once, the summary says that the
    /// next run resumes and counts the jobs as `status` shows them, and the interrupted attempt's log ends with a line saying so.
    @Test func anInterruptedRunSaysHowToResumeAndItsAttemptsLogSaysSo() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            jobs:
              fetch-a: { run: "true", requiresInternet: true }
              fetch-b: { run: "true", requiresInternet: true }
              use: { run: "true", needs: [fetch-a] }
              long:
                run: "echo working; touch ../started; while [ ! -f ../never ]; do sleep 0.05; done"
            """
        ])
        defer { _ = FileManager.default.createFile(atPath: workspace.root + "/never", contents: nil) }
        let out = Pipe()
        let runner = try workspace.start(
            ["run", "jobs", "--progress", "plain"], environment: ["JOBRUNNER_ONLINE": "0"], stdout: out)
        defer { if runner.isRunning { kill(runner.processIdentifier, SIGKILL) } }
        let lines = LineReader(out)
        let exit = ExitWatcher(runner)
        #expect(await lines.waitFor(": offline; the jobs that need the internet wait"), "\(lines.all)")
        #expect(await NotifyPluginTests.appears(workspace.root + "/started"))
        kill(runner.processIdentifier, SIGINT)
        #expect(await exit.wait() == 130)
        #expect(await lines.waitFor("stopped in"), "\(lines.all)")
        let offline = lines.all.filter { $0.contains(": offline;") }
        #expect(offline.count == 1, "announced once: \(lines.all)")
        let summary = try #require(lines.all.first { $0.contains(" stopped in ") })
        #expect(
            summary.hasSuffix("; `jobrunner run` with the same job files resumes it (--new starts afresh)"),
            "\(summary)")
        // The summary counts what `status` shows: the job held by its need waits, as the two
        // offline and the interrupted one (it said "3 waiting, 1 pending").
        #expect(summary.contains(": 4 waiting;"), "\(summary)")
        let status = try await workspace.run("status")
        let states = status.stdout.split(separator: "\n").compactMap { line -> String? in
            let cells = line.split(separator: " ", omittingEmptySubsequences: true)
            return cells.count > 2 && ["fetch-a", "fetch-b", "use", "long"].contains(String(cells[0]))
                ? String(cells[2]) : nil
        }
        #expect(states == ["waiting", "waiting", "waiting", "waiting"], "\(status.stdout)")
        let log = try await workspace.run("logs", "long")
        #expect(log.stdout.hasPrefix("working\n"), "\(log.stdout)")
        #expect(
            log.stdout.hasSuffix(
                "--- interrupted: the attempt was ended before it finished (a stop of the runner, "
                    + "or `cancel`, `skip` or `overlap: replace`); `jobrunner status` says what became of "
                    + "its job (after a stop, the next `jobrunner run` or `serve` starts it again)\n"
            ),
            "\(log.stdout)")
    }
}
