import Foundation
import Glibc
import JobRunnerCore
import JobRunnerLMDB
import Testing

/// `retry`, `skip` and `cancel` with no runner: they change the stored run themselves, one at a
/// time, and a run they leave with every job final is closed as its runner would close it.
@Suite struct OfflineOperatorTests {
    /// Two operator commands at once without a runner, while a third holds the operator lock
    /// (the test takes its `flock`): both wait, survive a runner's wake-up call meanwhile, and
    /// are both applied once it is let go. Before, each took the lock holder for a runner: one
    /// signalled the other (which died, "User defined signal 1") and left its own request for a
    /// runner that never came.
    @Test func operatorCommandsWithoutARunnerTakeTurns() async throws {
        let workspace = try Workspace(files: [
            "a.yaml": "jobs:\n  a: { run: exit 1 }\n  b: { run: exit 1 }\n"
        ])
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 1)
        let lock = open(workspace.state + "/operator.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(lock >= 0)
        #expect(flock(lock, LOCK_EX) == 0)
        var commands: [(Process, LineReader, Task<Finished, Never>)] = []
        for job in ["a", "b"] {
            let (out, err) = (Pipe(), Pipe())
            let process = try workspace.start(["retry", job], stdout: out, stderr: err)
            commands.append((process, LineReader(err), Task { await finished(process, stdout: out) }))
        }
        for (process, lines, _) in commands {
            #expect(await lines.waitFor("waiting for another jobrunner command to finish"))
            kill(process.processIdentifier, SIGUSR1)
        }
        close(lock)
        for (_, lines, result) in commands {
            let done = await result.value
            #expect(!done.signalled, "\(done)")
            #expect(done.status == 0, "\(done) \(lines.all)")
            #expect(!done.stdout.contains("asked the runner"), "\(done.stdout)")
        }
        let jobs = try await workspace.statusJobs()
        // Not started again yet: `waiting` for a slot, as `status --json` shows a pending job.
        #expect(jobs["a"]?["state"] as? String == "waiting", "\(jobs)")
        #expect(jobs["b"]?["state"] as? String == "waiting", "\(jobs)")
    }

    /// A `skip` without a runner that leaves every job final closes the run, `succeeded` here,
    /// as a runner would have: it no longer waits for a `run` with nothing left to do.
    @Test func anOperatorCommandThatEndsTheLastOpenJobClosesTheRun() async throws {
        let workspace = try Workspace(files: [
            "a.yaml": """
            jobs:
              long: { run: read line < ../long.fifo }
              quick: { run: echo done }
            """
        ])
        let (runner, events) = try await Self.runnerWithLongStarted(workspace)
        defer { if runner.isRunning { kill(runner.processIdentifier, SIGKILL) } }
        #expect(await events.waitFor("\"job\": \"quick\", \"attempt\": 1, \"event\": \"succeeded\""))
        kill(runner.processIdentifier, SIGKILL)
        _ = await waitForExit(runner)

        let skip = try await workspace.run("skip", "long")
        #expect(skip.status == 0, "\(skip)")
        #expect(skip.stdout.contains("long skipped"), "\(skip.stdout)")
        #expect(skip.stdout.contains("succeeded: every job is final"), "\(skip.stdout)")
        let status = try await workspace.run("status")
        let head = status.stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(head.contains("  succeeded  "), "\(head)")
        #expect(head.contains("finished"), "\(head)")
        #expect(!head.contains("resumes it"), "\(head)")
    }

    /// A stopped run's first line says what comes of it: the next `run` resumes it, unless a
    /// newer run replaced it.
    @Test func aStoppedRunsFirstLineSaysWhatResumesIt() async throws {
        let workspace = try Workspace(files: ["a.yaml": "jobs:\n  long: { run: read line < ../long.fifo }\n"])
        let (runner, _) = try await Self.runnerWithLongStarted(workspace)
        defer { if runner.isRunning { kill(runner.processIdentifier, SIGKILL) } }
        kill(runner.processIdentifier, SIGTERM)
        #expect(await waitForExit(runner) == 143)

        let first =
            try await workspace.run("status").stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.contains("  stopped  "), "\(first)")
        #expect(first.contains("(no runner: the next `jobrunner run` resumes it)"), "\(first)")
        let runID = try #require(first.split(separator: " ").dropFirst().first.map(String.init))

        try FileManager.default.createDirectory(
            atPath: workspace.root + "/other", withIntermediateDirectories: true)
        try "jobs:\n  quick: { run: echo done }\n".write(
            toFile: workspace.root + "/other/b.yaml", atomically: true, encoding: .utf8)
        #expect(try await workspace.run("run", "other", "--progress", "none").status == 0)
        let old = try await workspace.run("status", "--run", runID).stdout
        let oldFirst = old.split(separator: "\n").first.map(String.init) ?? ""
        #expect(oldFirst.contains("(no runner: a newer run replaced it)"), "\(oldFirst)")
    }

    /// A runner that ends without taking a stored request (its run had just closed, so it exits
    /// rather than read it) leaves it to the command, which applies it itself: a finished run is
    /// never resumed, and the request was lost. The test plays the runner: it holds the runner
    /// lock until the request is stored, then lets go.
    @Test func aRequestTheRunnerEndedWithoutTakingIsAppliedByTheCommand() async throws {
        let workspace = try Workspace(files: ["a.yaml": "jobs:\n  a: { run: 'exit 1' }\n"])
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 1)
        let runner = open(workspace.state, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        #expect(runner >= 0 && flock(runner, LOCK_EX) == 0)
        // The request is seen as it is committed, by following the store's events from here.
        let store = try LMDBQueueStore(readingOnly: workspace.state + "/db", withoutLockFile: false)
        defer { store.close() }
        let reader = ReadModel(store: store, lock: nil, logs: LogLocation(stateDirectory: workspace.state))
        let before = try await reader.latestEventSequence()
        let out = Pipe()
        let retry = try workspace.start(["retry", "a"], stdout: out)
        defer { if retry.isRunning { kill(retry.processIdentifier, SIGKILL) } }
        let stored = await firstEvent(in: reader, after: before) { change in
            if case .requestPosted(_, _, .retry, "a") = change { return true }
            return false
        }
        #expect(stored, "the command stored its request for the runner")
        close(runner)
        #expect(await waitForExit(retry) == 0)
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(printed.contains("ended before it took the request; applying it here"), "\(printed)")
        #expect(try await workspace.statusJobs()["a"]?["state"] as? String == "waiting")
    }

    /// Starts a runner on `workspace`, whose job `long` reads `long.fifo` (made here), and
    /// returns once `long` has started, with the runner's events.
    static func runnerWithLongStarted(_ workspace: borrowing Workspace) async throws -> (Process, LineReader)
    {
        #expect(mkfifo(workspace.root + "/long.fifo", 0o600) == 0)
        let out = Pipe()
        let runner = try workspace.start(["run", "jobs", "--events", "-", "--progress", "none"], stdout: out)
        let events = LineReader(out)
        let started = await events.waitFor("\"job\": \"long\", \"attempt\": 1, \"event\": \"started\"")
        #expect(started)
        if !started { kill(runner.processIdentifier, SIGKILL) }
        return (runner, events)
    }
}

/// Whether an event that `matches` is committed after `sequence` (a command
/// that never commits it must not hang the suite).
private func firstEvent(
    in reader: ReadModel, after sequence: UInt64,
    _ matches: @escaping @Sendable (CommittedEvent.Change) -> Bool
) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            do {
                for try await event in reader.events(after: sequence) where matches(event.change) {
                    return true
                }
            } catch {}
            return false
        }
        group.addTask {
            // Only the suite's guard: the event is what is awaited.
            try? await Task.sleep(for: TestLimits.safety)
            return false
        }
        let found = await group.next() ?? false
        group.cancelAll()
        return found
    }
}
