import Foundation
import Glibc
import JobRunnerCore
import Testing

@testable import JobRunnerShell

/// A scratch directory per test, for logs and files the jobs write.
struct Scratch: ~Copyable {
    let path: String
    /// Unique per test: the orphan tests end processes by their run id, and tests run in parallel.
    let runID = "RUN-\(UUID().uuidString)"
    init() throws {
        path =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "jobrunner-shell-\(UUID().uuidString)"
            ).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    func request(
        _ handler: HandlerSpec, id: String = "job", attempt: Int = 1, timeout: Duration? = nil,
        killGrace: Duration = .milliseconds(500), parameters: [String: JSONValue] = [:],
        environment: [String: String] = [:],
        needed: [String: [String: String]] = [:], onSpawn: @escaping @Sendable (Int32) -> Void = { _ in }
    ) -> AttemptRequest {
        let job = JobDefinition(
            id: id, handler: handler, parameters: parameters, environment: environment,
            workingDirectory: path,
            pipeline: "ci", timeout: timeout, killGrace: killGrace)
        return AttemptRequest(
            runID: runID, job: job, attempt: attempt, logPath: "\(path)/logs/\(id)/\(attempt).log",
            workDirectory: "\(path)/logs/\(id)", neededOutputs: needed, onSpawn: onSpawn)
    }

    func log(_ id: String = "job", attempt: Int = 1) -> String {
        (try? String(contentsOfFile: "\(path)/logs/\(id)/\(attempt).log", encoding: .utf8)) ?? "<no log>"
    }
}

/// Collects the pid from `onSpawn`; `spawned()` awaits it.
final class PIDBox: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var stored: Int32 = 0
    private var waiters: [CheckedContinuation<Int32, Never>] = []

    func set(_ pid: Int32) {
        let ready = lock.withLock { () -> [CheckedContinuation<Int32, Never>] in
            stored = pid
            defer { waiters = [] }
            return waiters
        }
        for waiter in ready { waiter.resume(returning: pid) }
    }

    var pid: Int32 { lock.withLock { stored } }

    /// Returns once the attempt's process exists.
    func spawned() async -> Int32 {
        await withCheckedContinuation { continuation in
            let known: Int32? = lock.withLock {
                if stored != 0 { return stored }
                waiters.append(continuation)
                return nil
            }
            if let known { continuation.resume(returning: known) }
        }
    }
}

/// One limit on children for every handler of these tests, as one runner has.
let testSlots = ChildSlots(capacity: 64)

@Suite struct ShellHandlerTests {
    let handler = ShellHandler(slots: testSlots)

    @Test func exitCodesBecomeOutcomes() async throws {
        let scratch = try Scratch()
        #expect(await handler.run(scratch.request(.shell("exit 0"))).outcome == .succeeded)
        let failed = await handler.run(scratch.request(.shell("exit 3")))
        #expect(failed.outcome == .failed)
        #expect(failed.exitCode == 3)
        #expect(failed.end == .exited(3))
        #expect(failed.end.words == "exit:3")
        #expect(await handler.run(scratch.request(.shell("exit 75"))).outcome == .tempfail)
        let signalled = await handler.run(scratch.request(.shell("kill -9 $$")))
        #expect(signalled.outcome == .failed)
        #expect(signalled.signal == SIGKILL)
    }

    @Test func stdoutAndStderrGoToTheAttemptLog() async throws {
        let scratch = try Scratch()
        _ = await handler.run(scratch.request(.shell("echo out; echo err >&2; echo more")))
        #expect(scratch.log() == "out\nerr\nmore\n")
    }

    @Test func environmentFollowsTheSpecAndParametersAreNeverPastedIntoTheCommand() async throws {
        let scratch = try Scratch()
        let request = scratch.request(
            .shell("env | grep -E '^(JOBRUNNER_|MODE=)' | sort"), id: "deploy", attempt: 2,
            parameters: ["target-host": .string("$(touch pwned)"), "count": .int(3)],
            environment: ["MODE": "fast"],
            needed: ["build": ["artifact.path": "/tmp/a b"]])
        let result = await handler.run(request)
        #expect(result.outcome == .succeeded)
        let lines = Set(scratch.log("deploy", attempt: 2).split(separator: "\n").map(String.init))
        #expect(lines.contains("JOBRUNNER_RUN=\(scratch.runID)"))
        #expect(lines.contains("JOBRUNNER_JOB=deploy"))
        #expect(lines.contains("JOBRUNNER_ATTEMPT=2"))
        #expect(lines.contains("JOBRUNNER_PIPELINE=ci"))
        #expect(lines.contains("JOBRUNNER_PARAM_TARGET_HOST=$(touch pwned)"))
        #expect(lines.contains("JOBRUNNER_PARAM_COUNT=3"))
        #expect(lines.contains("JOBRUNNER_OUT_BUILD_ARTIFACT_PATH=/tmp/a b"))
        #expect(lines.contains("MODE=fast"))
        #expect(lines.contains { $0.hasPrefix("JOBRUNNER_OUTPUT=") })
        #expect(lines.contains { $0.hasPrefix("JOBRUNNER_CONTROL=") })
        #expect(!FileManager.default.fileExists(atPath: scratch.path + "/pwned"))
    }

    @Test func argvRunsWithoutAShell() async throws {
        let scratch = try Scratch()
        let result = await handler.run(scratch.request(.argv(["echo", "$HOME", "a;b"])))
        #expect(result.outcome == .succeeded)
        #expect(scratch.log() == "$HOME a;b\n")
    }

    @Test func aMissingProgramFailsTheAttemptWithAReason() async throws {
        let scratch = try Scratch()
        let result = await handler.run(scratch.request(.argv(["no-such-program-xyz"])))
        #expect(result.outcome == .failed)
        #expect(result.exitCode == 127)
        #expect(scratch.log().contains("cannot start"))
    }

    @Test func outputsFileBecomesOutputs() async throws {
        let scratch = try Scratch()
        let result = await handler.run(
            scratch.request(.shell("printf 'a=1\\nb=x=y\\n\\n' >> \"$JOBRUNNER_OUTPUT\"")))
        #expect(result.outcome == .succeeded)
        #expect(result.outputs == ["a": "1", "b": "x=y"])
    }

    @Test func outputsOverOneMebibyteFailLoudly() async throws {
        let scratch = try Scratch()
        let result = await handler.run(
            scratch.request(
                .shell("head -c 1100000 /dev/zero | tr '\\0' 'x' | sed 's/^/k=/' >> \"$JOBRUNNER_OUTPUT\"")))
        #expect(result.outcome == .failed)
        guard case .refused(.outputsTooLarge(let written, AttemptFiles.outputLimit)) = result.end else {
            Issue.record("expected outputs too large, got \(result.end)")
            return
        }
        #expect(written > AttemptFiles.outputLimit)
        #expect(result.end.words.hasPrefix("outputs too large: at least \(written) bytes"))
        #expect(result.exitCode == 0, "the process exited 0; its outputs are refused")
    }

    @Test func controlFileSkipsAndSetsRetryAfter() async throws {
        let scratch = try Scratch()
        let skipped = await handler.run(
            scratch.request(.shell("echo 'skip=already deployed' >> \"$JOBRUNNER_CONTROL\"")))
        #expect(skipped.outcome == .skipped)
        #expect(skipped.end == .skipped("already deployed"))
        let later = await handler.run(
            scratch.request(.shell("echo 'retry-after=90s' >> \"$JOBRUNNER_CONTROL\"; exit 1")))
        #expect(later.outcome == .failed)
        #expect(later.retryAfter == .seconds(90))
    }

    /// Lines written with CRLF are lines: the outputs, the skip reason and the delay.
    @Test func crlfLinesOfTheOutputAndControlFilesAreLines() async throws {
        let scratch = try Scratch()
        let result = await handler.run(
            scratch.request(
                .shell(
                    "printf 'x=1\\r\\ny=2\\r\\n' >> \"$JOBRUNNER_OUTPUT\"; printf 'skip=not today\\r\\nother=1\\r\\n' >> \"$JOBRUNNER_CONTROL\""
                )))
        #expect(result.outputs == ["x": "1", "y": "2"])
        #expect(result.end == .skipped("not today"))
    }

    /// A `retry-after=` that is no duration is ignored, as before, but the attempt's log says so
    /// (it was ignored without a word); CRLF lines are read as lines.
    @Test func aRetryAfterThatIsNoDurationIsSaidInTheLog() async throws {
        let scratch = try Scratch()
        let result = await handler.run(
            scratch.request(
                .shell(
                    "printf 'retry-after=soon\\r\\nretry-after=2m\\r\\nx=1\\r\\n' >> \"$JOBRUNNER_CONTROL\"; exit 1"
                )))
        #expect(result.retryAfter == .seconds(120))
        let log = try String(contentsOfFile: "\(scratch.path)/logs/job/1.log", encoding: .utf8)
        #expect(
            log.contains(
                "JOBRUNNER_CONTROL line 1: retry-after takes a duration such as 30s or 5m, not 'soon'"),
            "\(log)")
    }

    @Test func timeoutEndsTheWholeProcessGroup() async throws {
        let scratch = try Scratch()
        let box = PIDBox()
        // The background sleep is a second member of the group; it must die too.
        let request = scratch.request(
            .shell("sleep 30 & echo started; wait"), timeout: .milliseconds(300), onSpawn: { box.set($0) })
        let result = await handler.run(request)
        #expect(result.outcome == .timeout)
        #expect(result.end == .timedOut(after: .milliseconds(300)))
        #expect(result.end.words == "timeout after 300ms")
        #expect(!ProcessGroups.isAlive(group: box.pid), "no process of the job's group is left")
    }

    @Test func aJobThatIgnoresSigtermIsKilledAfterTheGracePeriod() async throws {
        let scratch = try Scratch()
        let box = PIDBox()
        let request = scratch.request(
            .shell("trap '' TERM; echo ready; while :; do sleep 0.05; done"), timeout: .milliseconds(200),
            onSpawn: { box.set($0) })
        let result = await handler.run(request)
        #expect(result.outcome == .timeout)
        #expect(!ProcessGroups.isAlive(group: box.pid))
    }

    @Test func processesLeftBehindAreEndedWhenTheMainProcessExits() async throws {
        let scratch = try Scratch()
        let box = PIDBox()
        let result = await handler.run(
            scratch.request(.shell("(sleep 30 >/dev/null 2>&1 &); echo done"), onSpawn: { box.set($0) }))
        #expect(result.outcome == .succeeded)
        #expect(!ProcessGroups.isAlive(group: box.pid))
    }

    @Test func cancellationInterruptsTheAttempt() async throws {
        let scratch = try Scratch()
        let box = PIDBox()
        let handler = self.handler
        let request = scratch.request(.shell("echo running; sleep 600"), onSpawn: { box.set($0) })
        let task = Task { await handler.run(request) }
        _ = await box.spawned()
        task.cancel()
        let result = await task.value
        #expect(result.outcome == .interrupted)
        #expect(!ProcessGroups.isAlive(group: box.pid))
    }

    @Test func environmentNamesAreUpperCaseWithUnderscores() {
        #expect(ShellHandler.environmentName("artifact.path-x") == "ARTIFACT_PATH_X")
    }
}

@Suite struct CappedLogTests {
    @Test func keepsHeadAndTailAndSaysHowMuchWasCut() throws {
        let scratch = try Scratch()
        let path = scratch.path + "/cap.log"
        let log = CappedLog(path: path, limit: 20)
        let text = Array("0123456789abcdefghijKLMNOPQRSTUVWXYZ".utf8)
        // Feed in uneven pieces, as a pipe delivers them.
        for chunk in [text[0..<3], text[3..<17], text[17..<18], text[18...]] {
            Array(chunk).withUnsafeBytes { log.append($0) }
        }
        log.finish()
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.hasPrefix("0123456789\n[jobrunner: 16 bytes of output cut here"))
        #expect(written.hasSuffix("]\nQRSTUVWXYZ"))
    }

    /// The note about what was cut takes its bytes from the tail's share: the log is no
    /// longer than the limit (it was the limit plus the note).
    @Test func aCutLogStaysWithinItsLimit() throws {
        let scratch = try Scratch()
        let path = scratch.path + "/limit.log"
        let log = CappedLog(path: path, limit: 4096)
        let text = Array(String(repeating: "0123456789abcdef", count: 1024).utf8)
        text.withUnsafeBytes { log.append($0) }
        log.finish()
        let written = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(written.count == 4096, "\(written.count) bytes")
        let words = String(decoding: written, as: UTF8.self)
        let cut = try #require(words.firstMatch(of: /\[jobrunner: (\d+) bytes of output cut here/)?.1)
        let note = try #require(words.firstMatch(of: /\n\[jobrunner: [^\]]*\]\n/)?.0)
        #expect(Int(cut) == text.count - (4096 - note.utf8.count), "the count says what is missing")
        #expect(words.hasSuffix("0123456789abcdef"))
    }

    @Test func shortOutputIsKeptWhole() throws {
        let scratch = try Scratch()
        let path = scratch.path + "/short.log"
        let log = CappedLog(path: path, limit: 100)
        Array("hello\n".utf8).withUnsafeBytes { log.append($0) }
        log.finish()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "hello\n")
    }

    @Test func aHugeOutputIsCappedEndToEnd() async throws {
        let scratch = try Scratch()
        let handler = ShellHandler(slots: testSlots, logLimit: 64 << 10)
        let result = await handler.run(scratch.request(.shell("seq 1 200000")))
        #expect(result.outcome == .succeeded, "\(result)")
        let log = scratch.log()
        #expect(log.utf8.count < (64 << 10) + 200)
        #expect(log.hasPrefix("1\n2\n3\n"))
        #expect(log.hasSuffix("199999\n200000\n"))
        #expect(log.contains("bytes of output cut here"))
    }
}

/// Each attempt here must still run when the test ends it: its `sleep 600` outlasts the minute
/// and more for which the suite's other tests (hundreds at once on a pool of one thread per
/// core) can keep this process's tasks waiting, while a child starts at once and its sleep runs meanwhile.
@Suite struct OrphanTests {
    @Test func startTimeIdentifiesAProcess() throws {
        let groups = ProcessGroups()
        let mine = try #require(groups.startTime(of: getpid()))
        #expect(groups.startTime(of: getpid()) == mine)
        #expect(groups.startTime(of: 999_999_999) == nil)
    }

    @Test func terminatesALiveGroupButNotAReusedPid() async throws {
        let scratch = try Scratch()
        let box = PIDBox()
        let handler = ShellHandler(slots: testSlots, baseEnvironment: [:])
        let task = Task { await handler.run(scratch.request(.shell("sleep 600"), onSpawn: { box.set($0) })) }
        _ = await box.spawned()
        let groups = ProcessGroups()
        // A wrong start time means the pid is someone else's now; the environment does not
        // match either (another attempt number), so nothing is ended.
        await groups.terminate(
            Orphan(runID: scratch.runID, jobID: "job", attempt: 7, pid: box.pid, startTime: 1))
        #expect(ProcessGroups.isAlive(group: box.pid))
        await groups.terminate(
            Orphan(
                runID: scratch.runID, jobID: "job", attempt: 1, pid: box.pid,
                startTime: groups.startTime(of: box.pid)))
        let result = await task.value
        #expect(result.signal == SIGTERM)
    }

    @Test func findsAnAttemptWhosePidWasNeverStored() async throws {
        let scratch = try Scratch()
        let box = PIDBox()
        let handler = ShellHandler(slots: testSlots, baseEnvironment: [:])
        let task = Task {
            await handler.run(
                scratch.request(.shell("sleep 600"), id: "lost", attempt: 3, onSpawn: { box.set($0) }))
        }
        _ = await box.spawned()
        await ProcessGroups().terminate(Orphan(runID: scratch.runID, jobID: "lost", attempt: 3))
        let result = await task.value
        #expect(result.signal == SIGTERM)
    }

    /// A runner killed with several attempts running ends them all with one look at every
    /// process; an attempt of another number is left alone.
    @Test func endsSeveralOrphansAtOnce() async throws {
        let scratch = try Scratch()
        let handler = ShellHandler(slots: testSlots, baseEnvironment: [:])
        let one = PIDBox()
        let two = PIDBox()
        let other = PIDBox()
        let requests = [("one", one), ("two", two), ("other", other)].map { id, box in
            scratch.request(.shell("sleep 600"), id: id, onSpawn: { box.set($0) })
        }
        let first = Task { await handler.run(requests[0]) }
        let second = Task { await handler.run(requests[1]) }
        let third = Task { await handler.run(requests[2]) }
        _ = await one.spawned()
        _ = await two.spawned()
        _ = await other.spawned()
        await ProcessGroups().terminate([
            Orphan(runID: scratch.runID, jobID: "one", attempt: 1),
            Orphan(runID: scratch.runID, jobID: "two", attempt: 1),
            Orphan(runID: scratch.runID, jobID: "other", attempt: 2),
        ])
        #expect(await first.value.signal == SIGTERM)
        #expect(await second.value.signal == SIGTERM)
        #expect(ProcessGroups.isAlive(group: other.pid), "attempt 1 of other is not attempt 2")
        await ProcessGroups().terminate([Orphan(runID: scratch.runID, jobID: "other", attempt: 1)])
        #expect(await third.value.signal == SIGTERM)
    }
}

@Suite struct ConnectivityProbeTests {
    // Time limits far above what a probe needs: a shared machine can take seconds to start `true`.
    @Test func commandProbeExitZeroMeansOnline() async {
        #expect(
            await CommandProbe(command: "true", workingDirectory: nil, timeLimit: .seconds(300)).isOnline())
        #expect(
            !(await CommandProbe(command: "exit 1", workingDirectory: nil, timeLimit: .seconds(300))
                .isOnline())
        )
    }

    /// A probe past its time limit is offline: the test would wait the hour of `sleep` otherwise
    /// (the suite's time limit ends it first).
    @Test(.timeLimit(.minutes(5))) func aProbeThatHangsMeansOffline() async {
        #expect(
            !(await CommandProbe(
                command: "exec sleep 3600", workingDirectory: nil, timeLimit: .milliseconds(200)
            ).isOnline()))
    }

    @Test func defaultRoutesAreReadFromProcNetRoute() {
        let table = """
            Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
            eth0\t00000000\t0100A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0
            eth0\t0000A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0
            lo\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0
            wg0\t00000000\t00000000\t0000\t0\t0\t0\t00000000\t0\t0\t0
            """
        #expect(
            SystemProbe.defaultRouteInterfaces(table) == ["eth0"],
            "loopback and routes that are down do not count")
        #expect(SystemProbe.defaultRouteInterfaces("Iface\tDestination\n").isEmpty)
    }
}
